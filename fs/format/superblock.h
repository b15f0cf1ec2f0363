// Superblock: the fixed header that identifies a ckptfs store and says where
// its metadata log begins.
//
// Device layout (format v1):
//   [0, 4 KiB)        superblock copy A
//   [4 KiB, 8 KiB)    superblock copy B
//   [8 KiB, 1 MiB)    reserved, zero
//   [1 MiB, ...)      segment_count segments of segment_size bytes each
//
// Superblock encoding (little-endian, 96 bytes, rest of the 4 KiB block zero):
//   0  magic[8]        "CKPTFS\r\n" (the CR-LF catches text-mode mangling)
//   8  version u32     kFormatVersion
//   12 block_size u32  4096
//   16 segment_size u64
//   24 segment_count u32
//   28 flags u32       0
//   32 data_start u64  byte offset of segment 0
//   40 device_size u64 bytes formatted
//   48 store_id u64    random; stamped into every log block
//   56 generation u64  the valid copy with the larger generation wins
//   64 created_ns i64
//   72 log_head_segment u32   first segment of the metadata log
//   76 reserved u32
//   80 log_head_lsn u64       sequence number of the log's first block
//   88 log_head_prev_crc u32  chain value the first block must carry
//   92 crc u32                CRC32C of bytes [0, 92)
#pragma once

#include <cstdint>
#include <string>

#include "ckptfs/status.h"
#include "io/block_device.h"

namespace ckptfs {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr char kSuperblockMagic[8] = {'C', 'K', 'P', 'T', 'F', 'S', '\r', '\n'};
inline constexpr uint64_t kSuperblockOffsets[2] = {0, 4096};
inline constexpr uint64_t kDataStart = 1 << 20;
inline constexpr size_t kSuperblockEncodedSize = 96;
inline constexpr uint64_t kMinSegmentSize = 2ull << 20;  // holds a 1 MiB run and a link block
inline constexpr uint64_t kMaxSegmentSize = 1ull << 30;

struct Superblock {
  uint32_t version = kFormatVersion;
  uint32_t block_size = 4096;
  uint64_t segment_size = 0;
  uint32_t segment_count = 0;
  uint32_t flags = 0;
  uint64_t data_start = kDataStart;
  uint64_t device_size = 0;
  uint64_t store_id = 0;
  uint64_t generation = 0;
  int64_t created_ns = 0;
  uint32_t log_head_segment = 0;
  uint64_t log_head_lsn = 1;
  uint32_t log_head_prev_crc = 0;

  uint64_t SegmentOffset(uint32_t segment) const { return data_start + segment * segment_size; }
  // True if a stored run of `length` bytes at device address `addr` is block
  // aligned and lies inside one segment of this store.
  bool ContainsRun(uint64_t addr, uint64_t length) const {
    return addr >= data_start && addr % block_size == 0 &&
           (addr - data_start) / segment_size < segment_count &&
           (addr - data_start) % segment_size + length <= segment_size;
  }

  // Encodes into a kBlockSize block (dst must hold kBlockSize bytes).
  void EncodeTo(char* dst) const;
  // Decodes one copy. Invalid (foreign magic), NotSupported (other version)
  // or Corruption (checksum, impossible geometry), each with a clear message.
  static Result<Superblock> Decode(const char* src);
};

// Reads both copies and returns the valid one with the larger generation.
// When neither is valid, the error of copy A explains why (a foreign store
// says "not a ckptfs store", a damaged one names the checksum).
Result<Superblock> ReadSuperblock(BlockDevice* device);

// Writes `sb` (generation already bumped by the caller) to both copies,
// one at a time with a flush between, so a torn write leaves one good copy.
Status WriteSuperblock(BlockDevice* device, const Superblock& sb);

}  // namespace ckptfs
