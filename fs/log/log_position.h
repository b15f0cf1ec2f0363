// LogPosition: where the next metadata log block goes and what it must carry.
#pragma once

#include <cstdint>

namespace ckptfs {

struct LogPosition {
  uint32_t segment = 0;   // metadata segment holding the block
  uint64_t offset = 0;    // byte offset within that segment, 4 KiB aligned
  uint64_t lsn = 1;       // the block's sequence number
  uint32_t prev_crc = 0;  // chain value: crc of the block before it
};

}  // namespace ckptfs
