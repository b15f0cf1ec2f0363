// The run cache must never hand out a run from a segment's earlier life: a
// reader that fetched an old run slowly, while the segment was freed and
// reused, inserts it after the new run landed at the same address. Readers
// that miss one run at once load it once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

#include "format/superblock.h"
#include "io/memory_device.h"
#include "segment/data_log.h"
#include "segment/run_cache.h"

namespace ckptfs {
namespace {

// Reads the bytes at once but returns them late, for one armed address.
class GateDevice : public BlockDevice {
 public:
  explicit GateDevice(uint64_t size) : mem_(size) {}
  Status Read(uint64_t offset, void* buf, size_t len) override {
    Status s = mem_.Read(offset, buf, len);  // the bytes are read now...
    std::unique_lock<std::mutex> l(mu_);
    if (armed_ && offset == gate_addr_) {
      armed_ = false;
      blocked_ = true;
      cv_.notify_all();
      cv_.wait(l, [&] { return released_; });  // ...and returned late
    }
    return s;
  }
  Status Write(uint64_t offset, const void* buf, size_t len) override { return mem_.Write(offset, buf, len); }
  Status Flush() override { return mem_.Flush(); }
  uint64_t size() const override { return mem_.size(); }
  void Arm(uint64_t addr) { std::lock_guard<std::mutex> l(mu_); armed_ = true; gate_addr_ = addr; }
  void WaitBlocked() { std::unique_lock<std::mutex> l(mu_); cv_.wait(l, [&] { return blocked_; }); }
  void Release() { std::lock_guard<std::mutex> l(mu_); released_ = true; cv_.notify_all(); }

 private:
  MemoryDevice mem_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, blocked_ = false, released_ = false;
  uint64_t gate_addr_ = 0;
};

TEST(RunCache, ReusedSegmentNeverServesARunFromItsPast) {
  const uint64_t seg = 2 << 20;
  GateDevice dev(kDataStart + 16 * seg);
  Superblock sb;
  sb.segment_size = seg;
  sb.segment_count = 16;
  sb.device_size = dev.size();
  SegmentTable segments(sb);
  segments.FinishReplay({0});
  DataLogOptions opt;
  opt.memory_budget = 4 * seg;
  DataLog log(&dev, sb, &segments, opt);
  log.Start();
  const size_t MiB = 1 << 20;
  std::string a(MiB, 'A'), b(MiB, 'B'), n(MiB, 'N'), filler(MiB, 'F');
  auto ta = log.Append(a.data(), a.size(), DataLog::Stream::kCleaner);
  auto tb = log.Append(b.data(), b.size(), DataLog::Stream::kCleaner);
  ASSERT_TRUE(ta.ok() && tb.ok());
  PhysicalExtent ea = ta->extent(), eb = tb->extent();
  segments.Referenced(ea, 0, a.size());
  segments.Referenced(eb, 0, b.size());
  ta->Done();
  tb->Done();
  const uint32_t s1 = segments.SegmentOf(ea.addr);
  // Seal s1 and get it written out (no longer buffered).
  { auto t = log.Append(filler.data(), filler.size(), DataLog::Stream::kCleaner); ASSERT_TRUE(t.ok()); }
  ASSERT_TRUE(log.Sync().ok());

  // A slow reader (the cleaner, before it pinned what it read) fetches the old run.
  dev.Arm(ea.addr);
  Status cleaner_status;
  std::thread cleaner([&] {
    std::string out(a.size(), '\0');
    cleaner_status = log.Read(ea, 0, out.data(), out.size());
  });
  dev.WaitBlocked();
  // Meanwhile the user deletes the data, a commit frees s1, and s1 is reused.
  segments.Released(ea, 0, a.size());
  segments.Released(eb, 0, b.size());
  segments.CommitDurable(UINT64_MAX);
  PhysicalExtent en{};
  for (int i = 0; i < 200 && en.length == 0; ++i) {
    auto t = log.Append(i % 3 == 0 ? n.data() : filler.data(), MiB, DataLog::Stream::kCleaner);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    if (segments.SegmentOf(t->extent().addr) == s1 && i % 3 == 0) en = t->extent();
    t->Done();
    if (en.length == 0) {
      ASSERT_TRUE(log.Sync().ok());
      segments.CommitDurable(UINT64_MAX);  // filler segments have no live bytes
    }
  }
  ASSERT_EQ(segments.SegmentOf(en.addr), s1);
  segments.Referenced(en, 0, MiB);
  // Push the new incarnation of s1 out of memory.
  for (int i = 0; i < 3; ++i) { auto t = log.Append(filler.data(), MiB, DataLog::Stream::kCleaner); ASSERT_TRUE(t.ok()); }
  ASSERT_TRUE(log.Sync().ok());
  dev.Release();
  cleaner.join();
  std::string out(MiB, '\0');
  ASSERT_TRUE(log.Read(en, 0, out.data(), out.size()).ok());
  EXPECT_TRUE(out == n) << "read of the new run returned the deleted run's bytes (first byte '" << out[0] << "')";
  EXPECT_TRUE(log.Close().ok());
}

// A load that waits until the test opens its gate.
class GatedLoad {
 public:
  Result<RunCache::Run> operator()() {
    calls_.fetch_add(1);
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return open_; });
    if (!fail_.ok()) return fail_;
    auto run = std::make_shared<AlignedBuffer>(4096);
    std::memset(run->data(), 'R', 4096);
    return std::make_shared<const RunBytes>(std::move(run));
  }
  void Open(Status fail = Status::Ok()) {
    std::lock_guard<std::mutex> l(mu_);
    open_ = true;
    fail_ = fail;
    cv_.notify_all();
  }
  int calls() const { return calls_.load(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  Status fail_;
  std::atomic<int> calls_{0};
};

void WaitForHits(const RunCache& cache, uint64_t n) {
  while (cache.hits() < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// Two readers of run (4096, 7) that miss it together: the first loading it
// through `load` (held until opened), the second once the first waits for
// the load.
std::pair<std::future<Result<RunCache::Run>>, std::future<Result<RunCache::Run>>> TwoReadersOfOneRun(
    RunCache& cache, GatedLoad& load) {
  auto first = std::async(std::launch::async, [&] { return cache.FindOrLoad(4096, 7, std::ref(load)); });
  while (load.calls() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto second = std::async(std::launch::async, [&] { return cache.FindOrLoad(4096, 7, std::ref(load)); });
  return {std::move(first), std::move(second)};
}

TEST(RunCache, ReadersMissingTheSameRunAtOnceLoadItOnce) {
  RunCache cache(1 << 20);
  GatedLoad load;
  auto [first, second] = TwoReadersOfOneRun(cache, load);
  WaitForHits(cache, 1);  // the second reader waits for the first one's load
  load.Open();
  auto a = first.get(), b = second.get();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(load.calls(), 1);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.Find(4096, 7), *a);  // and it is cached
}

TEST(RunCache, ALoadOfTheSegmentsEarlierLifeIsNotShared) {
  RunCache cache(1 << 20);
  GatedLoad old_load;
  auto old_reader = std::async(std::launch::async, [&] { return cache.FindOrLoad(4096, 7, std::ref(old_load)); });
  while (old_load.calls() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Same address, another checksum: the new run's reader loads its own.
  auto new_reader = std::async(std::launch::async, [&] {
    return cache.FindOrLoad(4096, 8, [] {
      auto run = std::make_shared<AlignedBuffer>(4096);
      std::memset(run->data(), 'N', 4096);
      return Result<RunCache::Run>(std::make_shared<const RunBytes>(std::move(run)));
    });
  });
  const bool waited = new_reader.wait_for(std::chrono::seconds(10)) != std::future_status::ready;
  old_load.Open();
  ASSERT_FALSE(waited) << "the new run's reader waited for the old run's load";
  auto n = new_reader.get();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ((*n)->data()[0], 'N');
  ASSERT_TRUE(old_reader.get().ok());
}

TEST(RunCache, AFailedLoadFailsItsWaitersAndIsNotCached) {
  RunCache cache(1 << 20);
  GatedLoad load;
  auto [first, second] = TwoReadersOfOneRun(cache, load);
  WaitForHits(cache, 1);
  load.Open(Status::IOError("RADOS read timed out"));
  auto a = first.get(), b = second.get();
  EXPECT_TRUE(a.status().IsIOError());
  EXPECT_TRUE(b.status().IsIOError());
  EXPECT_EQ(load.calls(), 1);
  EXPECT_EQ(cache.Find(4096, 7), nullptr);
  // The next reader tries again.
  GatedLoad retry;
  retry.Open();
  auto c = cache.FindOrLoad(4096, 7, std::ref(retry));
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(retry.calls(), 1);
}

TEST(RunCache, AReaderWaitingForAFailedPrefetchLoadsTheRunItself) {
  RunCache cache(1 << 20);
  GatedLoad prefetch;
  auto prefetcher = std::async(std::launch::async,
                               [&] { return cache.FindOrLoad(4096, 7, std::ref(prefetch), /*hint=*/true); });
  while (prefetch.calls() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  GatedLoad own;
  own.Open();
  auto reader = std::async(std::launch::async, [&] { return cache.FindOrLoad(4096, 7, std::ref(own)); });
  WaitForHits(cache, 1);  // waiting for the prefetch
  prefetch.Open(Status::IOError("RADOS read timed out"));
  EXPECT_TRUE(prefetcher.get().status().IsIOError());
  auto r = reader.get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->data()[0], 'R');
  EXPECT_EQ(own.calls(), 1);
  EXPECT_EQ(cache.hits(), 0u);  // both loaded
  EXPECT_EQ(cache.misses(), 2u);
}

}  // namespace
}  // namespace ckptfs
