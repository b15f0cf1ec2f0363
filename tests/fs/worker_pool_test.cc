// WorkerPool: tasks run on as many threads as asked, results and exceptions
// come back through the futures, and every task queued runs before the pool
// is gone.
#include "util/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ckptfs {
namespace {

using std::chrono::seconds;

TEST(WorkerPoolTest, ReturnsEachTasksResult) {
  WorkerPool pool(2);
  std::vector<std::future<int>> results;
  for (int i = 0; i < 50; ++i) results.push_back(pool.Submit([i] { return i * i; }));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(results[i].get(), i * i);
}

TEST(WorkerPoolTest, RunsAsManyTasksAtOnceAsItHasThreads) {
  WorkerPool pool(3);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> running{0};
  std::vector<std::future<void>> tasks;
  for (int i = 0; i < 4; ++i) {
    tasks.push_back(pool.Submit([&] {
      ++running;
      released.wait();
    }));
  }
  // Three start, the fourth waits for a free thread.
  const auto deadline = std::chrono::steady_clock::now() + seconds(10);
  while (running.load() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(running.load(), 3);
  EXPECT_EQ(tasks[3].wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  release.set_value();
  for (auto& t : tasks) EXPECT_EQ(t.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_EQ(running.load(), 4);
}

TEST(WorkerPoolTest, AnExceptionReachesTheFuture) {
  WorkerPool pool(1);
  auto failed = pool.Submit([]() -> int { throw std::runtime_error("read failed"); });
  auto next = pool.Submit([] { return 7; });
  EXPECT_THROW(failed.get(), std::runtime_error);
  EXPECT_EQ(next.get(), 7);  // the thread lives on
}

TEST(WorkerPoolTest, TheDestructorRunsEveryQueuedTask) {
  std::atomic<int> ran{0};
  std::vector<std::future<void>> tasks;
  {
    WorkerPool pool(1);
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    tasks.push_back(pool.Submit([released] { released.wait(); }));
    for (int i = 0; i < 20; ++i) tasks.push_back(pool.Submit([&] { ++ran; }));
    release.set_value();
  }  // the 20 were queued behind the first when the pool began to go
  EXPECT_EQ(ran.load(), 20);
  for (auto& t : tasks) EXPECT_EQ(t.wait_for(seconds(0)), std::future_status::ready);
}

}  // namespace
}  // namespace ckptfs
