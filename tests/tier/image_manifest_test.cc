// The image manifest's bytes (docs/format.md, "Remote image") and its
// refusal of anything else.
#include <gtest/gtest.h>

#include "image_manifest.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace ckptfs {
namespace {

ImageManifest Sample() {
  ImageManifest m;
  m.store_id = 0x1122334455667788ull;
  m.publish_seq = 7;
  m.commit_lsn = 42;
  m.published_ns = 1700000000123456789;
  m.next_object_id = 9;
  m.superblock = std::string(4096, 's');
  m.segments = {{3, 5, {{0, 8192, 0xAAAA}, {8192, 4096, 0xBBBB}}}, {10, 8, {}}};
  m.evicted = {{3, 2, {{0, 4096, 0xCCCC}}}};
  return m;
}

// The header and the local entries of Sample(), as versions 1 and 2 share them.
std::string SampleUpToEvicted(uint32_t version) {
  std::string expected = "CKPTIMG\n";
  Encoder e(&expected);
  e.U32(version);
  e.U32(0);
  e.U64(0x1122334455667788ull);
  e.U64(7);
  e.U64(42);
  e.I64(1700000000123456789);
  e.U64(9);
  expected += std::string(4096, 's');
  e.U32(2);
  e.U32(3);
  e.U64(5);
  e.U32(2);
  for (uint32_t v : {0u, 8192u, 0xAAAAu, 8192u, 4096u, 0xBBBBu}) e.U32(v);
  e.U32(10);
  e.U64(8);
  e.U32(0);
  return expected;
}

TEST(ImageManifestTest, GoldenBytes) {
  const std::string bytes = Sample().Encode();
  // Built field by field from docs/format.md.
  std::string expected = SampleUpToEvicted(2);
  Encoder e(&expected);
  e.U32(1);
  e.U32(3);
  e.U64(2);
  e.U32(1);
  for (uint32_t v : {0u, 4096u, 0xCCCCu}) e.U32(v);
  e.U32(crc32c::Value(expected.data(), expected.size()));
  EXPECT_EQ(bytes, expected);
  auto back = ImageManifest::Decode(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->segments, Sample().segments);
  EXPECT_EQ(back->commit_lsn, 42u);
  EXPECT_EQ(back->evicted, Sample().evicted);
  EXPECT_EQ(back->StoredBytes(), 16384u);
  // Chunks of both lists, the evicted one too.
  EXPECT_EQ(back->TallyChunks().count, 3u);
  EXPECT_EQ(back->TallyChunks().largest, 8192u);
  EXPECT_EQ(back->Find(10)->object_id, 8u);
  EXPECT_EQ(back->Find(4), nullptr);
  // Objects are found in either list: segment 3's older incarnation was
  // evicted, its newer one is local.
  EXPECT_EQ(back->FindObject(2)->segment, 3u);
  EXPECT_EQ(back->FindObject(5)->segment, 3u);
  EXPECT_EQ(back->FindObject(8)->segment, 10u);
  EXPECT_EQ(back->FindObject(7), nullptr);
  EXPECT_EQ(ImageManifest::ObjectName(3, 5), "seg.3.5");
}

TEST(ImageManifestTest, WritesAndReadsVersionOneWhileNothingIsEvicted) {
  // Images with no evicted list are version 1, as before eviction existed,
  // so nodes that predate it still restore them.
  std::string v1 = SampleUpToEvicted(1);
  Encoder(&v1).U32(crc32c::Value(v1.data(), v1.size()));
  ImageManifest nothing_evicted = Sample();
  nothing_evicted.evicted.clear();
  EXPECT_EQ(nothing_evicted.Encode(), v1);
  auto back = ImageManifest::Decode(v1);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->segments, Sample().segments);
  EXPECT_TRUE(back->evicted.empty());
}

TEST(ImageManifestTest, RefusesWhatIsNotAnIntactManifest) {
  const std::string good = Sample().Encode();
  EXPECT_TRUE(ImageManifest::Decode("hello").status().code() == Status::Invalid("").code());
  std::string flipped = good;
  flipped[100] ^= 1;
  EXPECT_TRUE(ImageManifest::Decode(flipped).status().IsCorruption());
  EXPECT_TRUE(ImageManifest::Decode(good.substr(0, good.size() - 9)).status().IsCorruption());
  std::string other_version = good;
  other_version[8] = 3;
  auto s = ImageManifest::Decode(other_version).status();
  EXPECT_EQ(s.code(), Status::NotSupported("").code()) << s.ToString();
  EXPECT_NE(s.message().find("version 3"), std::string::npos) << s.ToString();
  // Overlapping chunks are damage, even with a good checksum.
  ImageManifest overlap = Sample();
  overlap.segments[0].chunks[1].offset = 4096;
  EXPECT_TRUE(ImageManifest::Decode(overlap.Encode()).status().IsCorruption());
  ImageManifest unsorted = Sample();
  unsorted.evicted.push_back(unsorted.evicted[0]);
  EXPECT_TRUE(ImageManifest::Decode(unsorted.Encode()).status().IsCorruption());
}

TEST(ImageManifestTest, ASegmentObjectsNameGivesItsIdAndNoOtherNameDoes) {
  EXPECT_EQ(ImageManifest::ObjectIdOf(ImageManifest::ObjectName(3, 17)), 17u);
  EXPECT_EQ(ImageManifest::ObjectIdOf(ImageManifest::ObjectName(0, 1ull << 40)), 1ull << 40);
  for (const char* other : {ImageManifest::kObject, ImageManifest::kLockObject, "seg.3", "seg.3.17x", "seg.3.0",
                            "seg..17", "xseg.3.17", "seg.3.-1", "seg.+3.17", "seg. 3.17", "seg.3.17.", ""}) {
    EXPECT_FALSE(ImageManifest::ObjectIdOf(other).has_value()) << other;
  }
}

}  // namespace
}  // namespace ckptfs
