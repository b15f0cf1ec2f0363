// LogReader: walks the metadata log chain from the superblock's head and
// hands each record to a callback, stopping at the first block that fails a
// check (the torn or unwritten tail).
#pragma once

#include <functional>
#include <vector>

#include "ckptfs/status.h"
#include "format/superblock.h"
#include "io/block_device.h"
#include "log/log_position.h"
#include "log/record.h"

namespace ckptfs {

struct LogReplayResult {
  LogPosition end;                         // where the next block goes
  std::vector<uint32_t> segments;          // metadata segments of the chain, in order
  uint64_t blocks = 0;
  uint64_t bytes = 0;                      // sum of the blocks' lengths
  uint64_t records = 0;
  std::string stop_reason;                 // why the walk ended, for logs and fsck
  // Set when a valid block of a later commit lies beyond the stop point: the
  // log was damaged after it was durable, and records beyond are lost.
  std::string damage;
};

class LogReader {
 public:
  using RecordHandler = std::function<Status(const Record&)>;

  // `device` must outlive the reader.
  LogReader(BlockDevice* device, const Superblock& sb) : device_(device), sb_(sb) {}

  // Calls `handler` for each record in log order (NextSegment records are
  // consumed here). A handler error aborts the walk and is returned.
  Result<LogReplayResult> Replay(const RecordHandler& handler);

 private:
  // Looks past the stop point in the same segment for a valid block that
  // belongs to a later commit; returns a description of it, or "".
  Result<std::string> ProbeBeyondTail(const LogPosition& stop);

  BlockDevice* const device_;
  const Superblock sb_;
};

}  // namespace ckptfs
