// Golden bytes: the on-disk encodings of the superblock, the log block header
// and every record, built here field by field from docs/format.md with a
// writer of the test's own, so a change to the code's encoders that changes
// the format fails here even when encode and decode still agree.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "format/log_format.h"
#include "format/superblock.h"
#include "io/memory_device.h"
#include "log/log_writer.h"
#include "log/record.h"
#include "util/aligned_buffer.h"
#include "util/crc32c.h"

namespace ckptfs {
namespace {

// Little-endian fields, appended in order, as docs/format.md lists them.
class Bytes {
 public:
  Bytes& u8(uint8_t v) { return Le(v, 1); }
  Bytes& u32(uint32_t v) { return Le(v, 4); }
  Bytes& u64(uint64_t v) { return Le(v, 8); }
  Bytes& i64(int64_t v) { return Le(static_cast<uint64_t>(v), 8); }
  Bytes& raw(const std::string& s) {
    out_ += s;
    return *this;
  }
  Bytes& str(const std::string& s) { return u32(static_cast<uint32_t>(s.size())).raw(s); }
  const std::string& get() const { return out_; }

 private:
  Bytes& Le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  std::string out_;
};

// A record as the format lays it out: type u8, body_len u32, body.
std::string RecordBytes(uint8_t type, const Bytes& body) {
  return Bytes().u8(type).str(body.get()).get();
}

std::string Encoded(const Record& r) {
  std::string out;
  EncodeRecord(r, &out);
  return out;
}

TEST(FormatGolden, EveryRecordType) {
  const PhysicalExtent raw{1 << 20, 12288, 0xabcdef01};
  PhysicalExtent compressed = raw;
  compressed.codec = 1;
  compressed.raw_length = 65536;
  EXPECT_EQ(Encoded(record::CreateInode{5, 0100644, 1000, 1001, 0x0103, 123, "t"}),
            RecordBytes(1, Bytes().u64(5).u32(0100644).u32(1000).u32(1001).u64(0x0103).i64(123).str("t")));
  EXPECT_EQ(Encoded(record::Link{1, "name", 5, 125}),
            RecordBytes(2, Bytes().u64(1).str("name").u64(5).i64(125)));
  EXPECT_EQ(Encoded(record::Unlink{1, "gone", 126}), RecordBytes(3, Bytes().u64(1).str("gone").i64(126)));
  EXPECT_EQ(Encoded(record::Rename{1, "a", 2, "b", record::Rename::kExchange, 127}),
            RecordBytes(4, Bytes().u64(1).str("a").u64(2).str("b").u32(2).i64(127)));
  EXPECT_EQ(Encoded(record::SetAttr{5, record::SetAttr::kMode | record::SetAttr::kMtime, 0600, 7, 8, 1, 2, 3}),
            RecordBytes(5, Bytes().u64(5).u32(1 | 16).u32(0600).u32(7).u32(8).i64(1).i64(2).i64(3)));
  EXPECT_EQ(Encoded(record::Truncate{5, 1 << 30, 128}), RecordBytes(6, Bytes().u64(5).u64(1 << 30).i64(128)));
  const Bytes write = Bytes().u64(5).u64(4096).u32(8192).u64(1 << 20).u32(12288).u32(0xabcdef01).u32(4096).i64(129);
  EXPECT_EQ(Encoded(record::WriteExtent{5, 4096, 8192, raw, 4096, 129}), RecordBytes(7, write));
  EXPECT_EQ(Encoded(record::WriteExtent{5, 4096, 8192, compressed, 4096, 129}),
            RecordBytes(13, Bytes(write).u8(1).u32(65536)));
  EXPECT_EQ(Encoded(record::SetXattr{5, "user.k", "v", 130}),
            RecordBytes(8, Bytes().u64(5).str("user.k").str("v").i64(130)));
  EXPECT_EQ(Encoded(record::RemoveXattr{5, "user.k", 131}), RecordBytes(9, Bytes().u64(5).str("user.k").i64(131)));
  EXPECT_EQ(Encoded(record::FreeInode{5}), RecordBytes(10, Bytes().u64(5)));
  EXPECT_EQ(Encoded(record::NextSegment{9}), RecordBytes(11, Bytes().u32(9)));
  EXPECT_EQ(Encoded(record::NextInode{12345}), RecordBytes(12, Bytes().u64(12345)));
  EXPECT_EQ(Encoded(record::PunchHole{5, 4096, 8192, 132}),
            RecordBytes(14, Bytes().u64(5).u64(4096).u64(8192).i64(132)));
  EXPECT_EQ(Encoded(record::Reserve{5, 4096, 8192}),
            RecordBytes(15, Bytes().u64(5).u64(4096).u64(8192)));
}

TEST(FormatGolden, Superblock) {
  Superblock sb;
  sb.segment_size = 32 << 20;
  sb.segment_count = 10;
  sb.device_size = kDataStart + 10 * sb.segment_size;
  sb.store_id = 0x1234567890abcdefull;
  sb.generation = 7;
  sb.created_ns = 1700000000123456789;
  sb.log_head_segment = 3;
  sb.log_head_lsn = 42;
  sb.log_head_prev_crc = 0xdeadbeef;
  AlignedBuffer block(kBlockSize);
  sb.EncodeTo(block.data());

  Bytes want;
  want.raw(std::string("CKPTFS\r\n", 8)).u32(1).u32(4096).u64(32 << 20).u32(10).u32(0);
  want.u64(kDataStart).u64(sb.device_size).u64(sb.store_id).u64(7).i64(sb.created_ns);
  want.u32(3).u32(0).u64(42).u32(0xdeadbeef);
  ASSERT_EQ(want.get().size(), 92u);
  want.u32(crc32c::Value(want.get().data(), 92));
  EXPECT_EQ(std::string(block.data(), 96), want.get());
  EXPECT_EQ(std::string(block.data() + 96, kBlockSize - 96), std::string(kBlockSize - 96, '\0'));
}

TEST(FormatGolden, LogBlockHeader) {
  Superblock sb;
  sb.segment_size = 2 << 20;
  sb.segment_count = 4;
  sb.device_size = kDataStart + 4 * sb.segment_size;
  sb.store_id = 0x1122334455667788ull;
  MemoryDevice device(sb.device_size);
  LogWriter writer(&device, sb, LogPosition{1, 0, 17, 0xcafef00d},
                   []() -> Result<uint32_t> { return Status::NoSpace("one segment is enough"); });
  const std::string records = Encoded(record::NextInode{99});
  ASSERT_TRUE(writer.Append(records).ok());

  AlignedBuffer block(kBlockSize);
  ASSERT_TRUE(device.Read(sb.SegmentOffset(1), block.data(), kBlockSize).ok());
  Bytes header;  // bytes [8, 48): what the block's crc covers, with the payload
  header.u64(sb.store_id).u64(17).u32(0xcafef00d).u32(static_cast<uint32_t>(records.size()));
  header.u32(4096).u32(0).u64(17);  // block_len, reserved, commit_lsn (this block's commit)
  const std::string covered = header.get() + records;
  const std::string want = Bytes().u32(kLogBlockMagic).u32(crc32c::Value(covered.data(), covered.size()))
                               .raw(covered).get();
  ASSERT_EQ(kLogBlockHeaderSize, 48u);
  EXPECT_EQ(std::string(block.data(), want.size()), want);
  EXPECT_EQ(std::string(block.data() + want.size(), kBlockSize - want.size()),
            std::string(kBlockSize - want.size(), '\0'));
}

}  // namespace
}  // namespace ckptfs
