// ExtentMap: overwrites split neighbours, truncation trims, holes appear,
// and every displaced byte is reported exactly once.
#include "meta/extent_map.h"

#include <gtest/gtest.h>

namespace ckptfs {
namespace {

MappedExtent At(uint64_t addr, uint64_t len) {
  return MappedExtent{len, PhysicalExtent{addr, static_cast<uint32_t>(len), 0}, 0};
}

struct Released {
  uint64_t bytes = 0;
  ExtentMap::ReleaseFn fn() {
    return [this](const PhysicalExtent&, uint32_t, uint64_t b) { bytes += b; };
  }
};

TEST(ExtentMap, LookupReportsHolesAroundData) {
  ExtentMap map;
  map.Insert(4096, At(1 << 20, 4096), nullptr);
  auto pieces = map.Lookup(0, 3 * 4096);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_TRUE(pieces[0].hole);
  EXPECT_EQ(pieces[0].length, 4096u);
  EXPECT_FALSE(pieces[1].hole);
  EXPECT_EQ(pieces[1].phys.addr, 1u << 20);
  EXPECT_TRUE(pieces[2].hole);
  EXPECT_EQ(pieces[2].offset, 8192u);
}

TEST(ExtentMap, OverwriteInTheMiddleSplitsTheExtent) {
  ExtentMap map;
  Released r;
  map.Insert(0, At(1 << 20, 12288), r.fn());
  map.Insert(4096, At(2 << 20, 4096), r.fn());
  EXPECT_EQ(r.bytes, 4096u);
  EXPECT_EQ(map.entry_count(), 3u);
  EXPECT_EQ(map.mapped_bytes(), 12288u);
  auto pieces = map.Lookup(0, 12288);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].phys.addr, 1u << 20);
  EXPECT_EQ(pieces[0].skip, 0u);
  EXPECT_EQ(pieces[1].phys.addr, 2u << 20);
  EXPECT_EQ(pieces[2].phys.addr, 1u << 20);
  EXPECT_EQ(pieces[2].skip, 8192u);  // the tail still reads from its original place
}

TEST(ExtentMap, OverwriteSpanningSeveralExtents) {
  ExtentMap map;
  Released r;
  for (int i = 0; i < 4; ++i) map.Insert(i * 4096, At((i + 1) << 20, 4096), r.fn());
  map.Insert(2048, At(9 << 20, 4096 * 2), r.fn());
  EXPECT_EQ(r.bytes, 8192u);
  EXPECT_EQ(map.mapped_bytes(), 4u * 4096);
  auto pieces = map.Lookup(0, 4 * 4096);
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[0].length, 2048u);
  EXPECT_EQ(pieces[1].phys.addr, 9u << 20);
  EXPECT_EQ(pieces[2].offset, 2048u + 8192);
  EXPECT_EQ(pieces[2].skip, 2048u);
}

TEST(ExtentMap, TruncateTrimsAndDrops) {
  ExtentMap map;
  Released r;
  map.Insert(0, At(1 << 20, 8192), r.fn());
  map.Insert(8192, At(2 << 20, 8192), r.fn());
  map.Truncate(5000, r.fn());
  EXPECT_EQ(map.mapped_bytes(), 5000u);
  EXPECT_EQ(r.bytes, 16384u - 5000);
  EXPECT_EQ(map.entry_count(), 1u);
  map.Clear(r.fn());
  EXPECT_EQ(map.mapped_bytes(), 0u);
  EXPECT_EQ(r.bytes, 16384u);
}

TEST(ExtentMap, LookupInsideOneExtentCarriesSkip) {
  ExtentMap map;
  map.Insert(100, At(1 << 20, 1000), nullptr);
  auto pieces = map.Lookup(600, 200);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].skip, 500u);
  EXPECT_EQ(pieces[0].length, 200u);
}

}  // namespace
}  // namespace ckptfs
