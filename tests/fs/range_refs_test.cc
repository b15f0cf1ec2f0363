// RangeRefs: bytes are in use while any reference covers them, counted
// once; spans merge back so an unshared store stays a handful of spans.
#include "segment/range_refs.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace ckptfs {
namespace {

TEST(RangeRefs, SharedBytesAreInUseOnceAndUntilTheLastReferenceGoes) {
  RangeRefs refs;
  EXPECT_EQ(refs.Add(0, 8192), 8192u);
  // A copy of the middle: nothing new is in use, 4096 bytes are shared.
  EXPECT_EQ(refs.Add(2048, 4096), 0u);
  EXPECT_EQ(refs.SharedBytes(), 4096u);
  EXPECT_EQ(refs.Referenced(0, 1 << 20), 8192u);
  // The original goes: only what the copy covers stays in use.
  EXPECT_EQ(refs.Remove(0, 8192), 4096u);
  EXPECT_EQ(refs.SharedBytes(), 0u);
  EXPECT_EQ(refs.Referenced(0, 1 << 20), 4096u);
  EXPECT_EQ(refs.Remove(2048, 4096), 4096u);
  EXPECT_EQ(refs.span_count(), 0u);
}

TEST(RangeRefs, AdjacentRangesMergeIntoOneSpan) {
  RangeRefs refs;
  for (uint64_t at = 0; at < 64; ++at) EXPECT_EQ(refs.Add(at * 4096, 4096), 4096u);
  EXPECT_EQ(refs.span_count(), 1u);
  // A share splits it; its end merges it back.
  refs.Add(10 * 4096, 4096);
  EXPECT_EQ(refs.span_count(), 3u);
  refs.Remove(10 * 4096, 4096);
  EXPECT_EQ(refs.span_count(), 1u);
  // Releasing what nothing references changes nothing.
  EXPECT_EQ(refs.Remove(1 << 30, 4096), 0u);
  EXPECT_EQ(refs.Referenced(0, 1ull << 40), 64u * 4096);
}

// Against a byte-by-byte count: any mix of overlapping adds and removes.
TEST(RangeRefs, AgreesWithCountingEveryByte) {
  constexpr uint64_t kSize = 4096;
  std::mt19937 rng(7);
  RangeRefs refs;
  std::vector<int> count(kSize, 0);
  std::vector<std::pair<uint64_t, uint64_t>> held;
  for (int step = 0; step < 20000; ++step) {
    if (held.empty() || rng() % 2 == 0) {
      const uint64_t start = rng() % kSize;
      const uint64_t len = 1 + rng() % (kSize - start);
      uint64_t want = 0;
      for (uint64_t i = start; i < start + len; ++i) want += count[i]++ == 0;
      ASSERT_EQ(refs.Add(start, len), want) << "step " << step;
      held.emplace_back(start, len);
    } else {
      const size_t pick = rng() % held.size();
      const auto [start, len] = held[pick];
      held.erase(held.begin() + static_cast<long>(pick));
      uint64_t want = 0;
      for (uint64_t i = start; i < start + len; ++i) want += --count[i] == 0;
      ASSERT_EQ(refs.Remove(start, len), want) << "step " << step;
    }
    uint64_t in_use = 0, shared = 0;
    for (int c : count) {
      in_use += c > 0;
      shared += c > 1;
    }
    ASSERT_EQ(refs.Referenced(0, kSize), in_use);
    ASSERT_EQ(refs.SharedBytes(), shared);
  }
}

}  // namespace
}  // namespace ckptfs
