// Superblock encoding and the refusals a mount relies on.
#include "format/superblock.h"

#include <gtest/gtest.h>

#include "io/memory_device.h"
#include "util/aligned_buffer.h"
#include "util/coding.h"

namespace ckptfs {
namespace {

Superblock Sample() {
  Superblock sb;
  sb.segment_size = 2 << 20;
  sb.segment_count = 10;
  sb.device_size = kDataStart + 10 * sb.segment_size;
  sb.store_id = 0x1234567890abcdefull;
  sb.generation = 7;
  sb.created_ns = 1700000000123456789;
  sb.log_head_segment = 3;
  sb.log_head_lsn = 42;
  sb.log_head_prev_crc = 0xdeadbeef;
  return sb;
}

TEST(Superblock, RoundTrip) {
  AlignedBuffer block(kBlockSize);
  Superblock sb = Sample();
  sb.EncodeTo(block.data());
  auto decoded = Superblock::Decode(block.data());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->segment_size, sb.segment_size);
  EXPECT_EQ(decoded->segment_count, sb.segment_count);
  EXPECT_EQ(decoded->store_id, sb.store_id);
  EXPECT_EQ(decoded->generation, sb.generation);
  EXPECT_EQ(decoded->created_ns, sb.created_ns);
  EXPECT_EQ(decoded->log_head_segment, sb.log_head_segment);
  EXPECT_EQ(decoded->log_head_lsn, sb.log_head_lsn);
  EXPECT_EQ(decoded->log_head_prev_crc, sb.log_head_prev_crc);
}

TEST(Superblock, ChecksumMismatchIsCorruption) {
  AlignedBuffer block(kBlockSize);
  Sample().EncodeTo(block.data());
  block.data()[20] ^= 1;
  auto decoded = Superblock::Decode(block.data());
  EXPECT_TRUE(decoded.status().IsCorruption()) << decoded.status().ToString();
}

TEST(Superblock, ForeignBytesAreNotAStore) {
  AlignedBuffer block(kBlockSize);
  std::memcpy(block.data(), "\x7f" "ELF", 4);
  auto decoded = Superblock::Decode(block.data());
  EXPECT_EQ(decoded.status().code(), Status::Code::kInvalid);
  EXPECT_NE(decoded.status().message().find("not a ckptfs store"), std::string::npos);
}

TEST(Superblock, OtherVersionIsNamed) {
  AlignedBuffer block(kBlockSize);
  Superblock sb = Sample();
  sb.version = 2;
  sb.EncodeTo(block.data());
  auto decoded = Superblock::Decode(block.data());
  EXPECT_EQ(decoded.status().code(), Status::Code::kNotSupported);
  EXPECT_NE(decoded.status().message().find("version 2"), std::string::npos);
}

TEST(Superblock, ImpossibleGeometryIsCorruption) {
  AlignedBuffer block(kBlockSize);
  Superblock sb = Sample();
  sb.log_head_segment = sb.segment_count;  // past the end
  sb.EncodeTo(block.data());
  EXPECT_TRUE(Superblock::Decode(block.data()).status().IsCorruption());
}

TEST(Superblock, NewerValidCopyWinsAndOneDamagedCopySuffices) {
  Superblock sb = Sample();
  MemoryDevice device(sb.device_size);
  ASSERT_TRUE(WriteSuperblock(&device, sb).ok());
  sb.generation = 8;
  AlignedBuffer block(kBlockSize);
  sb.EncodeTo(block.data());
  ASSERT_TRUE(device.Write(kSuperblockOffsets[1], block.data(), kBlockSize).ok());
  auto read = ReadSuperblock(&device);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->generation, 8u);

  device.bytes()[kSuperblockOffsets[1] + 30] ^= 0x40;  // damage copy B
  read = ReadSuperblock(&device);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->generation, 7u);
}

TEST(Superblock, TruncatedDeviceIsRefused) {
  Superblock sb = Sample();
  MemoryDevice full(sb.device_size);
  ASSERT_TRUE(WriteSuperblock(&full, sb).ok());
  MemoryDevice truncated(sb.device_size - sb.segment_size);
  std::memcpy(truncated.bytes().data(), full.bytes().data(), 2 * kBlockSize);
  auto read = ReadSuperblock(&truncated);
  ASSERT_TRUE(read.status().IsCorruption());
  EXPECT_NE(read.status().message().find("truncated"), std::string::npos);
}

TEST(Superblock, ForgedGeometryCannotOverflowOrShrinkSegments) {
  Superblock sb;
  sb.segment_size = 1ull << 33;
  sb.segment_count = 1u << 31;  // 2^33 * 2^31 = 2^64 wraps to 0
  sb.device_size = 2 << 20;
  sb.store_id = 42;
  sb.generation = 1;
  AlignedBuffer b(kBlockSize);
  sb.EncodeTo(b.data());
  auto d = Superblock::Decode(b.data());
  EXPECT_FALSE(d.ok()) << "accepted segment_size 2^33, segment_count 2^31 on a 2 MiB device";
  Superblock tiny;
  tiny.segment_size = 4096;
  tiny.segment_count = 16;
  tiny.device_size = (1 << 20) + 16 * 4096;
  tiny.EncodeTo(b.data());
  EXPECT_FALSE(Superblock::Decode(b.data()).ok()) << "accepted a 4 KiB segment size";
}

}  // namespace
}  // namespace ckptfs
