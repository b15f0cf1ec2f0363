// The pool behind every read of a stored run: a buffer let go is the next
// one handed out, sizes go to the smallest class that wastes at most half
// (the largest class takes everything from a quarter of it up), the
// shelves stay bounded each and together, and the run cache counts the
// memory a pooled run holds, not just its bytes.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "segment/run_cache.h"
#include "util/buffer_pool.h"

namespace ckptfs {
namespace {

constexpr size_t kMiB = 1 << 20;
constexpr size_t kKiB = 1 << 10;

TEST(BufferPool, ABufferLetGoIsTheNextOneHandedOut) {
  BufferPool pool(kMiB, 4, /*classes=*/5);
  const char* first = nullptr;
  {
    auto a = pool.Get(kMiB);
    first = a->data();
    EXPECT_EQ(a->size(), kMiB);
  }
  auto b = pool.Get(900 * kKiB);
  EXPECT_EQ(b->data(), first);
  EXPECT_EQ(b->size(), 900 * kKiB);
  EXPECT_EQ(b->capacity(), kMiB);
  EXPECT_EQ(pool.allocations(), 1u);
}

TEST(BufferPool, EachSizeTakesTheSmallestClassThatHoldsIt) {
  BufferPool pool(kMiB, 4, /*classes=*/4);  // 1 MiB, 256, 128 and 64 KiB
  EXPECT_EQ(pool.Get(kMiB)->capacity(), kMiB);
  EXPECT_EQ(pool.Get(512 * kKiB)->capacity(), kMiB);
  EXPECT_EQ(pool.Get(256 * kKiB + 1)->capacity(), kMiB);
  EXPECT_EQ(pool.Get(256 * kKiB)->capacity(), 256 * kKiB);
  EXPECT_EQ(pool.Get(129 * kKiB)->capacity(), 256 * kKiB);
  EXPECT_EQ(pool.Get(100 * kKiB)->capacity(), 128 * kKiB);
  EXPECT_EQ(pool.Get(32 * kKiB)->capacity(), 64 * kKiB);
  // Each buffer went back to its shelf before the next call: one per class.
  EXPECT_EQ(pool.allocations(), 4u);
  // Below half the smallest class, and above the largest: a buffer of its
  // own, sized to fit, never pooled.
  EXPECT_EQ(pool.Get(32 * kKiB - 1)->capacity(), 32 * kKiB - 1);
  EXPECT_EQ(pool.Get(4 * kKiB)->capacity(), 4 * kKiB);
  EXPECT_EQ(pool.Get(2 * kMiB)->capacity(), 2 * kMiB);
  EXPECT_EQ(pool.allocations(), 4u);
}

TEST(BufferPool, RunsFromAQuarterToAWholeShareOneShelf) {
  // A restore's runs lie mostly between half a run and a whole one: a
  // buffer let go by one of them serves the next, whatever their sizes.
  BufferPool pool(kMiB, 4, /*classes=*/4);
  std::vector<std::shared_ptr<AlignedBuffer>> held;
  for (size_t size : {kMiB, 300 * kKiB, 700 * kKiB, 520 * kKiB}) held.push_back(pool.Get(size));
  EXPECT_EQ(pool.allocations(), 4u);
  held.clear();
  for (size_t size : {400 * kKiB, 260 * kKiB, kMiB, 900 * kKiB}) held.push_back(pool.Get(size));
  EXPECT_EQ(pool.allocations(), 4u);
}

TEST(BufferPool, OneClassTakesFromAQuarterOfItUp) {
  BufferPool pool(kMiB, 4);
  EXPECT_EQ(pool.Get(kMiB / 4)->capacity(), kMiB);
  EXPECT_EQ(pool.Get(kMiB / 4 - 1)->capacity(), kMiB / 4 - 1);  // its own, not pooled
  EXPECT_EQ(pool.allocations(), 1u);
}

TEST(BufferPool, ClassesDoNotShareBuffers) {
  BufferPool pool(kMiB, 4, /*classes=*/2);  // 1 MiB and 256 KiB
  pool.Get(600 * kKiB);  // made, then shelved in the 1 MiB class
  pool.Get(200 * kKiB);  // the 256 KiB class has none: a new one
  EXPECT_EQ(pool.allocations(), 2u);
  pool.Get(300 * kKiB);
  pool.Get(150 * kKiB);
  EXPECT_EQ(pool.allocations(), 2u);
}

TEST(BufferPool, AShelfKeepsAtMostItsBound) {
  BufferPool pool(kMiB, 2);
  {
    std::vector<std::shared_ptr<AlignedBuffer>> held;
    for (int i = 0; i < 3; ++i) held.push_back(pool.Get(kMiB));
    EXPECT_EQ(pool.allocations(), 3u);
  }  // two go back on the shelf, the third is freed
  std::vector<std::shared_ptr<AlignedBuffer>> again;
  for (int i = 0; i < 3; ++i) again.push_back(pool.Get(kMiB));
  EXPECT_EQ(pool.allocations(), 4u);
}

TEST(BufferPool, AllShelvesTogetherKeepAtMostTheLargestClassesBound) {
  BufferPool pool(kMiB, 2, /*classes=*/2);  // 2 MiB idle at most, in all
  auto a = pool.Get(kMiB), b = pool.Get(kMiB);
  auto c = pool.Get(256 * kKiB), d = pool.Get(256 * kKiB);
  EXPECT_EQ(pool.allocations(), 4u);
  c.reset();
  d.reset();
  a.reset();  // 1.5 MiB idle now: 256 KiB twice and 1 MiB
  b.reset();  // freed, though its own shelf has room
  std::vector<std::shared_ptr<AlignedBuffer>> again;
  again.push_back(pool.Get(kMiB));
  again.push_back(pool.Get(256 * kKiB));
  again.push_back(pool.Get(256 * kKiB));
  EXPECT_EQ(pool.allocations(), 4u);
  again.push_back(pool.Get(kMiB));
  EXPECT_EQ(pool.allocations(), 5u);
}

TEST(BufferPool, ABufferMayOutliveItsPool) {
  std::shared_ptr<AlignedBuffer> kept;
  {
    BufferPool pool(kMiB, 2, /*classes=*/3);
    kept = pool.Get(200 * kKiB);
  }
  kept->data()[0] = 1;
  kept.reset();  // returns to a shelf that only the buffer still holds
}

TEST(RunCache, CountsTheMemoryAPooledRunHolds) {
  BufferPool pool(kMiB, 8);  // one class: every run takes 1 MiB
  RunCache cache(2 * kMiB);
  for (uint64_t addr = 0; addr < 3; ++addr) cache.Insert(addr * kMiB, 7, std::make_shared<const RunBytes>(pool.Get(4 * kKiB + 512 * kKiB)));
  // Three runs of 516 KiB are 1.5 MiB of bytes but 3 MiB of buffers: the
  // oldest is evicted.
  EXPECT_EQ(cache.Find(0, 7), nullptr);
  EXPECT_NE(cache.Find(1 * kMiB, 7), nullptr);
  EXPECT_NE(cache.Find(2 * kMiB, 7), nullptr);
}

}  // namespace
}  // namespace ckptfs
