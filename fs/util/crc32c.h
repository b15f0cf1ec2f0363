// CRC32C (Castagnoli), the checksum on every log block, superblock and data
// extent. Computed by ISA-L with the fastest instructions the CPU has, so
// data checksums cost far less than the copy that precedes them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ckptfs::crc32c {

// Returns the CRC32C of data[0, n) continuing from `crc` (0 to start).
uint32_t Extend(uint32_t crc, const void* data, size_t n);

inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

}  // namespace ckptfs::crc32c
