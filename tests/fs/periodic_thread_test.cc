// PeriodicThread: a Wake is never lost, whether it comes before the thread
// waits or while the task runs.
#include "util/periodic_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace ckptfs {
namespace {

using std::chrono::milliseconds;

// Polls `done` for up to `limit`.
template <typename F>
bool Within(milliseconds limit, F done) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return done();
}

TEST(PeriodicThreadTest, AWakeRightAfterStartRunsTheTaskBeforeTheInterval) {
  std::atomic<int> runs{0};
  PeriodicThread t;
  t.Start(std::chrono::hours(1), [&] { ++runs; });
  t.Wake();  // most likely before the thread first waits
  EXPECT_TRUE(Within(milliseconds(5000), [&] { return runs.load() == 1; }));
  t.Stop();
  EXPECT_EQ(runs.load(), 1);
}

TEST(PeriodicThreadTest, AWakeWhileTheTaskRunsRunsItAgain) {
  std::atomic<int> runs{0};
  std::atomic<bool> release{false};
  PeriodicThread t;
  t.Start(std::chrono::hours(1), [&] {
    ++runs;
    while (runs.load() == 1 && !release.load()) std::this_thread::sleep_for(milliseconds(1));
  });
  t.Wake();
  ASSERT_TRUE(Within(milliseconds(5000), [&] { return runs.load() == 1; }));
  t.Wake();  // the first run is still in the task
  release = true;
  EXPECT_TRUE(Within(milliseconds(5000), [&] { return runs.load() == 2; }));
  t.Stop();
  EXPECT_EQ(runs.load(), 2);
}

TEST(PeriodicThreadTest, WithoutAWakeTheTaskWaitsForTheInterval) {
  std::atomic<int> runs{0};
  PeriodicThread t;
  t.Start(milliseconds(3000), [&] { ++runs; });
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(runs.load(), 0);
  EXPECT_TRUE(Within(milliseconds(10000), [&] { return runs.load() >= 1; }));
  t.Stop();
}

}  // namespace
}  // namespace ckptfs
