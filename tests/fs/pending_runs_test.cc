// PendingRuns: writes wait for (or are refused) budget, compressors take runs
// in the order they were queued, and runs stay findable until placed; the
// waiting parts are driven from other threads.
#include "compress/pending_runs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "log/record.h"

namespace ckptfs {
namespace {

using namespace std::chrono_literals;

// How long a thread that should be blocked is given to (wrongly) finish.
constexpr auto kStillBlocked = 100ms;

// Polls `done` for up to 10 s; true once it holds.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return done();
}

std::shared_ptr<const PendingRun> MustAdd(PendingRuns* runs, const std::string& data,
                                          uint64_t ino = 1, uint64_t offset = 0) {
  auto r = runs->Add(ino, offset, CompressionPolicy{}, data.data(), data.size());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(*r, nullptr);
  return r.ok() ? *r : nullptr;
}

TEST(PendingRuns, AddCopiesTheBytesAndNumbersRunsInOrder) {
  PendingRuns runs(1 << 20);
  EXPECT_EQ(runs.last_id(), 0u);
  std::string data = "abcdefgh";
  CompressionPolicy policy;
  policy.enabled = true;
  policy.level = -3;
  auto a = runs.Add(7, 4096, policy, data.data(), data.size());
  ASSERT_TRUE(a.ok() && *a);
  data = "XXXXXXXX";  // the writer's buffer is free once Add returns
  EXPECT_EQ(std::string((*a)->data.begin(), (*a)->data.end()), "abcdefgh");
  EXPECT_EQ((*a)->id, 1u);
  EXPECT_EQ((*a)->ino, 7u);
  EXPECT_EQ((*a)->offset, 4096u);
  EXPECT_EQ((*a)->policy, policy);
  EXPECT_GT((*a)->time_ns, 0);
  EXPECT_TRUE((PhysicalExtent{(*a)->address(), 8}.pending()));
  auto b = MustAdd(&runs, "12345");
  EXPECT_EQ(b->id, 2u);
  EXPECT_NE(b->address(), (*a)->address());
  EXPECT_EQ(runs.last_id(), 2u);

  PendingRunStats s = runs.stats();
  EXPECT_EQ(s.runs, 2u);
  EXPECT_EQ(s.bytes, 13u);
  EXPECT_EQ(s.held_runs, 2u);
  EXPECT_EQ(s.held_bytes, 13u);
}

TEST(PendingRuns, FindServesARunUntilItIsPlaced) {
  PendingRuns runs(1 << 20);
  auto a = MustAdd(&runs, "first");
  auto b = MustAdd(&runs, "second");
  EXPECT_EQ(runs.Find(a->address()), a);
  EXPECT_EQ(runs.Find(b->address()), b);
  EXPECT_EQ(runs.Find(PhysicalExtent::kPendingBit | 99), nullptr);
  runs.Placed(a->id);
  EXPECT_EQ(runs.Find(a->address()), nullptr);
  EXPECT_EQ(runs.Find(b->address()), b);
  PendingRunStats s = runs.stats();
  EXPECT_EQ(s.held_runs, 1u);
  EXPECT_EQ(s.held_bytes, 6u);
  runs.Placed(a->id);  // twice: nothing left to forget
  EXPECT_EQ(runs.stats().held_bytes, 6u);
}

TEST(PendingRuns, FailedRunStaysReadableButFreesItsBudget) {
  PendingRuns runs(1 << 20);
  auto a = MustAdd(&runs, "lost write");
  runs.Failed(a->id);
  EXPECT_EQ(runs.Find(a->address()), a);
  PendingRunStats s = runs.stats();
  EXPECT_EQ(s.failed_runs, 1u);
  EXPECT_EQ(s.held_runs, 0u);
  EXPECT_EQ(s.held_bytes, 0u);
  runs.WaitPlaced(a->id);  // a failed run is not waited for
}

TEST(PendingRuns, TakeHandsOutOnlyQueuedRunsInQueueOrder) {
  PendingRuns runs(1 << 20);
  auto a = MustAdd(&runs, "a");
  auto b = MustAdd(&runs, "b");
  auto c = MustAdd(&runs, "c");
  runs.Queue(a);
  runs.Queue(c);  // b is not mapped yet: no compressor may see it
  EXPECT_EQ(runs.Take(), a);
  EXPECT_EQ(runs.Take(), c);
  runs.Queue(b);
  EXPECT_EQ(runs.Take(), b);
}

TEST(PendingRuns, TakeWaitsForARunToBeQueued) {
  PendingRuns runs(1 << 20);
  auto a = MustAdd(&runs, "a");
  auto taken = std::async(std::launch::async, [&] { return runs.Take(); });
  // Held but not queued: the taker keeps waiting.
  EXPECT_EQ(taken.wait_for(kStillBlocked), std::future_status::timeout);
  runs.Queue(a);
  EXPECT_EQ(taken.get(), a);
}

TEST(PendingRuns, StopDrainsTheQueueThenWakesTakersWithNull) {
  PendingRuns runs(1 << 20);
  auto a = MustAdd(&runs, "a");
  runs.Queue(a);
  runs.Stop();
  EXPECT_EQ(runs.Take(), a);  // what was queued is still placed
  EXPECT_EQ(runs.Take(), nullptr);
  auto late = runs.Add(1, 0, CompressionPolicy{}, "x", 1);
  ASSERT_FALSE(late.ok());
  EXPECT_TRUE(late.status().IsIOError()) << late.status().ToString();
}

TEST(PendingRuns, StopWakesABlockedTaker) {
  PendingRuns runs(1 << 20);
  auto taken = std::async(std::launch::async, [&] { return runs.Take(); });
  EXPECT_EQ(taken.wait_for(kStillBlocked), std::future_status::timeout);
  runs.Stop();
  ASSERT_EQ(taken.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(taken.get(), nullptr);
}

TEST(PendingRuns, WithoutWaitingAWriteOverTheBudgetIsRefused) {
  PendingRuns runs(100);
  auto a = MustAdd(&runs, std::string(60, 'a'));
  auto refused = runs.Add(1, 0, CompressionPolicy{}, std::string(60, 'b').data(), 60,
                          /*wait=*/false);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(*refused, nullptr);
  PendingRunStats s = runs.stats();
  EXPECT_EQ(s.refused, 1u);
  EXPECT_EQ(s.runs, 1u);
  EXPECT_EQ(s.held_bytes, 60u);
  EXPECT_EQ(runs.last_id(), 1u);  // a refused write takes no id
  // Exactly up to the budget still fits.
  auto fits = runs.Add(1, 0, CompressionPolicy{}, std::string(40, 'c').data(), 40,
                       /*wait=*/false);
  ASSERT_TRUE(fits.ok());
  EXPECT_NE(*fits, nullptr);
  EXPECT_EQ(runs.stats().held_bytes, 100u);
}

TEST(PendingRuns, OneRunAlwaysFitsHoweverSmallTheBudget) {
  PendingRuns runs(10);
  auto big = runs.Add(1, 0, CompressionPolicy{}, std::string(1000, 'a').data(), 1000,
                      /*wait=*/false);
  ASSERT_TRUE(big.ok());
  EXPECT_NE(*big, nullptr);
  EXPECT_EQ(runs.stats().waits, 0u);
}

TEST(PendingRuns, AddWaitsUntilAPlacedRunFreesRoom) {
  PendingRuns runs(100);
  auto a = MustAdd(&runs, std::string(80, 'a'));
  auto b = MustAdd(&runs, std::string(20, 'b'));
  const std::string more(50, 'c');
  auto added = std::async(std::launch::async, [&] {
    return runs.Add(1, 0, CompressionPolicy{}, more.data(), more.size());
  });
  ASSERT_TRUE(Eventually([&] { return runs.stats().waits == 1; }));
  EXPECT_EQ(added.wait_for(kStillBlocked), std::future_status::timeout);
  // 20 bytes are not room enough for 50; still waiting.
  runs.Placed(b->id);
  EXPECT_EQ(added.wait_for(kStillBlocked), std::future_status::timeout);
  runs.Placed(a->id);
  ASSERT_EQ(added.wait_for(10s), std::future_status::ready);
  auto c = added.get();
  ASSERT_TRUE(c.ok() && *c);
  EXPECT_EQ((*c)->id, 3u);
  EXPECT_EQ((*c)->data.size(), 50u);
  EXPECT_EQ(runs.stats().held_bytes, 50u);
}

TEST(PendingRuns, AFailedRunAlsoLetsAWaitingWriteIn) {
  PendingRuns runs(100);
  auto a = MustAdd(&runs, std::string(100, 'a'));
  auto added = std::async(std::launch::async, [&] {
    return runs.Add(1, 0, CompressionPolicy{}, "b", 1);
  });
  ASSERT_TRUE(Eventually([&] { return runs.stats().waits == 1; }));
  runs.Failed(a->id);
  ASSERT_EQ(added.wait_for(10s), std::future_status::ready);
  auto b = added.get();
  ASSERT_TRUE(b.ok() && *b);
}

TEST(PendingRuns, StopReleasesAWriteWaitingForBudget) {
  PendingRuns runs(100);
  auto a = MustAdd(&runs, std::string(100, 'a'));
  auto added = std::async(std::launch::async, [&] {
    return runs.Add(1, 0, CompressionPolicy{}, "b", 1);
  });
  ASSERT_TRUE(Eventually([&] { return runs.stats().waits == 1; }));
  runs.Stop();
  ASSERT_EQ(added.wait_for(10s), std::future_status::ready);
  auto b = added.get();
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(b.status().IsIOError());
  EXPECT_EQ(runs.stats().held_runs, 1u);  // only `a`
}

TEST(PendingRuns, WaitPlacedWaitsForEveryRunUpToTheId) {
  PendingRuns runs(1 << 20);
  auto a = MustAdd(&runs, "a");
  auto b = MustAdd(&runs, "b");
  auto c = MustAdd(&runs, "c");
  runs.WaitPlaced(0);  // nothing to wait for
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    runs.WaitPlaced(b->id);
    returned = true;
  });
  // b placed before a (compressors run in parallel): a still holds it up.
  runs.Placed(b->id);
  std::this_thread::sleep_for(kStillBlocked);
  EXPECT_FALSE(returned.load());
  runs.Placed(a->id);
  EXPECT_TRUE(Eventually([&] { return returned.load(); }));
  waiter.join();
  // c, newer than the id waited for, never mattered.
  EXPECT_EQ(runs.Find(c->address()), c);
}

TEST(PendingRuns, ConcurrentWritersAndCompressorsPlaceEveryRun) {
  // A small budget so writers keep waiting on the compressors.
  PendingRuns runs(4 * 1024);
  constexpr int kWriters = 4, kPerWriter = 200, kCompressors = 2;
  std::atomic<int> placed{0};
  std::vector<std::thread> compressors;
  for (int i = 0; i < kCompressors; ++i) {
    compressors.emplace_back([&] {
      while (auto run = runs.Take()) {
        ASSERT_EQ(run->data.size(), 1024u);
        runs.Placed(run->id);
        placed.fetch_add(1);
      }
    });
  }
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      const std::string data(1024, static_cast<char>('a' + w));
      for (int i = 0; i < kPerWriter; ++i) {
        auto r = runs.Add(w, i * 1024, CompressionPolicy{}, data.data(), data.size());
        ASSERT_TRUE(r.ok() && *r);
        EXPECT_LE(runs.stats().held_bytes, 4u * 1024);
        runs.Queue(*r);
      }
    });
  }
  for (auto& t : writers) t.join();
  runs.WaitPlaced(runs.last_id());
  EXPECT_EQ(runs.stats().held_runs, 0u);
  runs.Stop();
  for (auto& t : compressors) t.join();
  EXPECT_EQ(placed.load(), kWriters * kPerWriter);
  EXPECT_EQ(runs.stats().runs, static_cast<uint64_t>(kWriters * kPerWriter));
}

}  // namespace
}  // namespace ckptfs
