// Every record type survives encode/decode; damaged bytes are refused.
#include "log/record.h"

#include <gtest/gtest.h>

#include <vector>

namespace ckptfs {
namespace {

std::vector<Record> AllKinds() {
  return {
      record::CreateInode{5, 0100644, 1000, 1000, 0, 123, ""},
      record::CreateInode{6, 0120777, 0, 0, 0, 124, "target/of/link"},
      record::Link{1, "name", 5, 125},
      record::Unlink{1, "gone", 126},
      record::Rename{1, "a", 2, "b", record::Rename::kExchange, 127},
      record::SetAttr{5, record::SetAttr::kMode | record::SetAttr::kMtime, 0600, 0, 0, 1, 2, 3},
      record::Truncate{5, 1 << 30, 128},
      record::WriteExtent{5, 4096, 8192, PhysicalExtent{1 << 20, 12288, 0xabcdef}, 4096, 129},
      record::SetXattr{5, "user.k", std::string("v\0v", 3), 130},
      record::RemoveXattr{5, "user.k", 131},
      record::FreeInode{5},
      record::NextSegment{9},
      record::NextInode{12345},
      record::PunchHole{5, 4096, 8192, 132},
      record::Reserve{5, 4096, 8192},
  };
}

// The type byte of each record is the format: fixed numbers, whatever the
// order of the variant in record.h.
TEST(Record, TypeNumbersArePinned) {
  const uint8_t want[] = {1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15};
  auto kinds = AllKinds();
  ASSERT_EQ(kinds.size(), sizeof want);
  for (size_t i = 0; i < kinds.size(); ++i) {
    std::string encoded;
    EncodeRecord(kinds[i], &encoded);
    EXPECT_EQ(static_cast<uint8_t>(encoded[0]), want[i]) << "record " << i;
  }
}

TEST(Record, RoundTripEveryKind) {
  std::string encoded;
  auto kinds = AllKinds();
  for (const Record& r : kinds) EncodeRecord(r, &encoded);
  std::string_view in(encoded);
  for (const Record& want : kinds) {
    auto got = DecodeRecord(&in);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->index(), want.index());
    std::string a, b;
    EncodeRecord(*got, &a);
    EncodeRecord(want, &b);
    EXPECT_EQ(a, b);
  }
  EXPECT_TRUE(in.empty());
}

TEST(Record, FieldsSurvive) {
  std::string encoded;
  EncodeRecord(record::Rename{3, "from", 4, "to", record::Rename::kNoReplace, 99}, &encoded);
  std::string_view in(encoded);
  auto got = DecodeRecord(&in);
  ASSERT_TRUE(got.ok());
  const auto& r = std::get<record::Rename>(*got);
  EXPECT_EQ(r.src_parent, 3u);
  EXPECT_EQ(r.src_name, "from");
  EXPECT_EQ(r.dst_parent, 4u);
  EXPECT_EQ(r.dst_name, "to");
  EXPECT_EQ(r.flags, record::Rename::kNoReplace);
  EXPECT_EQ(r.time_ns, 99);
}

TEST(Record, TruncatedIsCorruption) {
  std::string encoded;
  EncodeRecord(record::Link{1, "abcdef", 5, 125}, &encoded);
  for (size_t cut = 0; cut < encoded.size(); ++cut) {
    std::string_view in(encoded.data(), cut);
    EXPECT_TRUE(DecodeRecord(&in).status().IsCorruption()) << "cut at " << cut;
  }
}

TEST(Record, UnknownTypeIsCorruption) {
  std::string encoded;
  EncodeRecord(record::FreeInode{5}, &encoded);
  encoded[0] = 77;
  std::string_view in(encoded);
  EXPECT_TRUE(DecodeRecord(&in).status().IsCorruption());
}

TEST(Record, BodyWithTrailingBytesIsCorruption) {
  std::string encoded;
  EncodeRecord(record::FreeInode{5}, &encoded);
  // Claim a longer body and supply the bytes: the body no longer parses exactly.
  encoded[1] = 9;
  encoded.push_back('x');
  std::string_view in(encoded);
  EXPECT_TRUE(DecodeRecord(&in).status().IsCorruption());
}

}  // namespace
}  // namespace ckptfs
