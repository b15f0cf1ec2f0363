// PhysicalExtent and Codec: where stored bytes live and how they are coded.
// On-disk types shared by the log (records carry them), the segments, the
// namespace and the codecs, so none of those depends on another for them.
// Their encoding inside records is in log/record.h and docs/format.md.
#pragma once

#include <cstdint>

namespace ckptfs {

// How a stored run's bytes decode. The numbers are stored in records.
enum class Codec : uint8_t { kRaw = 0, kZstd = 1, kZstdGroup2 = 2, kZstdGroup4 = 3 };
constexpr uint8_t kMaxCodec = 3;

// Where a run of stored bytes lives: a 4 KiB-aligned device address, the
// stored length and its CRC32C (of the stored bytes). Reads verify the
// whole run. A compressed run also records its codec and decoded length;
// file offsets into it (`skip`) count decoded bytes.
//
// In memory only, an address with kPendingBit set names a run still waiting
// for a compressor thread (fs/compress/compression_pipeline.h); such extents never reach the
// log, the segment table or the device.
//
// An address with kRemoteBit set names a run that was evicted to the store's
// tier (include/ckptfs/remote_tier.h): its local segment was reused, and the
// bytes live at `remote_offset()` in the tier's object `remote_object()`,
// which holds that segment's incarnation at the same offsets. Such addresses
// are logged like any other and read through the tier.
//
// An address with both bits set (kReservedAddress) stands for no stored
// bytes: space fallocate(2) reserved in a hole. Such a range reads as
// zeros, counts in st_blocks and holds back free space until a write
// replaces it (segment/segment_table.h); its length and skip mean nothing.
// It is logged as a Reserve record (log/record.h), never as an extent.
struct PhysicalExtent {
  static constexpr uint64_t kPendingBit = 1ull << 63;
  static constexpr uint64_t kRemoteBit = 1ull << 62;
  static constexpr int kRemoteOffsetBits = 32;  // offsets within a segment (<= 1 GiB)
  static constexpr uint64_t kMaxRemoteObject = (1ull << (62 - kRemoteOffsetBits)) - 1;
  static constexpr uint64_t kReservedAddress = kPendingBit | kRemoteBit;
  static constexpr uint32_t kMaxRunLength = 1 << 20;  // the most file bytes a run holds
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t crc = 0;
  uint8_t codec = 0;        // 0: raw (Codec::kRaw)
  uint32_t raw_length = 0;  // decoded length; meaningful when codec != 0
  bool operator==(const PhysicalExtent&) const = default;

  bool compressed() const { return codec != 0; }
  static PhysicalExtent Reserved() { return PhysicalExtent{.addr = kReservedAddress}; }

  bool pending() const { return (addr & (kPendingBit | kRemoteBit)) == kPendingBit; }
  bool reserved() const { return addr == kReservedAddress; }
  bool remote() const { return (addr & (kPendingBit | kRemoteBit)) == kRemoteBit; }
  // Stored in a segment of the local device: not pending, remote or reserved.
  bool local() const { return (addr & (kPendingBit | kRemoteBit)) == 0; }
  static uint64_t RemoteAddress(uint64_t object, uint64_t offset) {
    return kRemoteBit | object << kRemoteOffsetBits | offset;
  }
  uint64_t remote_object() const { return (addr & ~kRemoteBit) >> kRemoteOffsetBits; }
  uint64_t remote_offset() const { return addr & ((1ull << kRemoteOffsetBits) - 1); }
  // The run's length as file bytes (what skip + length may reach).
  uint32_t logical_length() const { return compressed() ? raw_length : length; }
  // The stored bytes a reference to `bytes` of the run's file bytes stands
  // for: proportional for compressed runs (an estimate used for space
  // reporting and cleaning, never for freeing).
  uint64_t StoredShare(uint64_t bytes) const {
    return compressed() && raw_length > 0 ? bytes * length / raw_length : bytes;
  }
};

}  // namespace ckptfs
