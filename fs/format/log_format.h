// Metadata log block format.
//
// The metadata log is a chain of blocks written into metadata segments. A
// block is a multiple of 4 KiB:
//   0  magic u32        kLogBlockMagic
//   4  crc u32          CRC32C of bytes [8, kLogBlockHeaderSize + payload_len)
//   8  store_id u64     the superblock's; blocks of another store never match
//   16 lsn u64          previous block's lsn + 1
//   24 prev_crc u32     previous block's crc (the superblock's seed for the first)
//   28 payload_len u32
//   32 block_len u32    bytes the block occupies, multiple of 4 KiB
//   36 reserved u32     zero
//   40 commit_lsn u64   lsn of the first block of the commit this block is in
//   48 payload          records, then zero padding to block_len
// A record is: type u8, body_len u32, body (see log/record.h).
//
// The chain value prev_crc makes a stale block left from an earlier use of the
// space unacceptable even when its lsn happens to fit. Replay stops at the
// first block that fails any check: everything after a torn write is absent.
// commit_lsn tells a torn commit from damage: a valid block beyond the stop
// point that belongs to a later commit proves the bad block was once durable
// (commits are flushed in order), so the log was damaged, not torn.
//
// Within a metadata segment blocks follow one another from offset 0. The last
// 4 KiB of each metadata segment is kept for a link block whose only record
// is kNextSegment, naming the segment where the chain continues at offset 0.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ckptfs {

inline constexpr uint32_t kLogBlockMagic = 0x424C4B43;  // "CKLB"
inline constexpr size_t kLogBlockHeaderSize = 48;
inline constexpr size_t kMaxLogBlockSize = 1 << 20;
inline constexpr size_t kLinkBlockReserve = 4096;

}  // namespace ckptfs
