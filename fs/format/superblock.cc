// Superblock encoding, validation and the two-copy update protocol.
#include "format/superblock.h"

#include <cstring>

#include "util/aligned_buffer.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace ckptfs {

void Superblock::EncodeTo(char* dst) const {
  std::memset(dst, 0, kBlockSize);
  std::memcpy(dst, kSuperblockMagic, 8);
  EncodeFixed32(dst + 8, version);
  EncodeFixed32(dst + 12, block_size);
  EncodeFixed64(dst + 16, segment_size);
  EncodeFixed32(dst + 24, segment_count);
  EncodeFixed32(dst + 28, flags);
  EncodeFixed64(dst + 32, data_start);
  EncodeFixed64(dst + 40, device_size);
  EncodeFixed64(dst + 48, store_id);
  EncodeFixed64(dst + 56, generation);
  EncodeFixed64(dst + 64, static_cast<uint64_t>(created_ns));
  EncodeFixed32(dst + 72, log_head_segment);
  EncodeFixed64(dst + 80, log_head_lsn);
  EncodeFixed32(dst + 88, log_head_prev_crc);
  EncodeFixed32(dst + 92, crc32c::Value(dst, 92));
}

Result<Superblock> Superblock::Decode(const char* src) {
  if (std::memcmp(src, kSuperblockMagic, 8) != 0) {
    return Status::Invalid("not a ckptfs store (no ckptfs magic; run mkfs.ckptfs to format it)");
  }
  Superblock sb;
  sb.version = DecodeFixed32(src + 8);
  uint32_t stored_crc = DecodeFixed32(src + 92);
  if (crc32c::Value(src, 92) != stored_crc) {
    return Status::Corruption("superblock checksum mismatch");
  }
  if (sb.version != kFormatVersion) {
    return Status::NotSupported("store has format version " + std::to_string(sb.version) +
                                "; this ckptfs reads version " + std::to_string(kFormatVersion));
  }
  sb.block_size = DecodeFixed32(src + 12);
  sb.segment_size = DecodeFixed64(src + 16);
  sb.segment_count = DecodeFixed32(src + 24);
  sb.flags = DecodeFixed32(src + 28);
  sb.data_start = DecodeFixed64(src + 32);
  sb.device_size = DecodeFixed64(src + 40);
  sb.store_id = DecodeFixed64(src + 48);
  sb.generation = DecodeFixed64(src + 56);
  sb.created_ns = static_cast<int64_t>(DecodeFixed64(src + 64));
  sb.log_head_segment = DecodeFixed32(src + 72);
  sb.log_head_lsn = DecodeFixed64(src + 80);
  sb.log_head_prev_crc = DecodeFixed32(src + 88);
  // Bounds as mkfs sets them; the division keeps a forged count from
  // overflowing the product.
  if (sb.block_size != kBlockSize || sb.segment_size < kMinSegmentSize ||
      sb.segment_size > kMaxSegmentSize || sb.segment_size % (1 << 20) != 0 ||
      sb.segment_count == 0 || sb.log_head_segment >= sb.segment_count ||
      sb.data_start != kDataStart || sb.device_size < sb.data_start ||
      sb.segment_count > (sb.device_size - sb.data_start) / sb.segment_size) {
    return Status::Corruption("superblock geometry is impossible");
  }
  return sb;
}

Result<Superblock> ReadSuperblock(BlockDevice* device) {
  if (device->size() < kDataStart) {
    return Status::Invalid("device too small to hold a ckptfs store (" +
                           std::to_string(device->size()) + " bytes)");
  }
  AlignedBuffer block(kBlockSize);
  Status first_error;
  bool have = false;
  Superblock best;
  for (int copy = 0; copy < 2; ++copy) {
    CKPTFS_RETURN_IF_ERROR(device->Read(kSuperblockOffsets[copy], block.data(), kBlockSize));
    auto sb = Superblock::Decode(block.data());
    if (!sb.ok()) {
      if (copy == 0) first_error = sb.status();
      continue;
    }
    if (!have || sb->generation > best.generation) best = *sb;
    have = true;
  }
  if (!have) {
    // A foreign store has no magic in either copy; say that rather than
    // "corruption", but keep copy B's reason if A was merely foreign.
    return first_error;
  }
  if (device->size() < best.data_start ||
      best.segment_count > (device->size() - best.data_start) / best.segment_size) {
    return Status::Corruption("store is truncated: superblock describes " +
                              std::to_string(best.device_size) + " bytes, device has " +
                              std::to_string(device->size()));
  }
  return best;
}

Status WriteSuperblock(BlockDevice* device, const Superblock& sb) {
  AlignedBuffer block(kBlockSize);
  sb.EncodeTo(block.data());
  for (uint64_t offset : kSuperblockOffsets) {
    CKPTFS_RETURN_IF_ERROR(device->Write(offset, block.data(), kBlockSize));
    CKPTFS_RETURN_IF_ERROR(device->Flush());
  }
  return Status::Ok();
}

}  // namespace ckptfs
