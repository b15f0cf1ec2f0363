// WorkerPool: a fixed number of threads that run submitted tasks in the order
// they came, each task's result (or exception) delivered through a future.
// The drain reads the next pieces it sends from the local store on one
// (tier/chunk_uploader.cc), so that those reads overlap each other and the RADOS
// writes in flight.
//
// The threads start with the first task: a pool built before the daemon
// forks loses none in the fork. Every task submitted runs, even once the
// destructor has begun: a caller waits on the futures of tasks that fill its
// buffers, and a task dropped would leave it a broken promise instead of a
// finished read.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/mutex.h"

namespace ckptfs {

class WorkerPool {
 public:
  explicit WorkerPool(unsigned threads) : thread_count_(std::max(1u, threads)) {}
  // Runs what is queued, then joins the threads.
  ~WorkerPool() EXCLUDES(mu_) {
    std::vector<std::thread> threads;
    {
      MutexLock lock(&mu_);
      stopping_ = true;
      threads.swap(threads_);
    }
    queued_.NotifyAll();
    for (std::thread& t : threads) t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`. A pool that cannot start a single thread (EAGAIN) runs it
  // in the caller, before returning, rather than throw.
  template <typename Task>
  std::future<std::invoke_result_t<Task&>> Submit(Task task) EXCLUDES(mu_) {
    using Result = std::invoke_result_t<Task&>;
    // std::function needs a copyable callable; a packaged_task is not.
    auto packaged = std::make_shared<std::packaged_task<Result()>>(std::move(task));
    std::future<Result> result = packaged->get_future();
    bool inline_run = false;
    {
      MutexLock lock(&mu_);
      StartThreadsLocked();
      if (threads_.empty()) {
        inline_run = true;
      } else {
        queue_.push_back([packaged] { (*packaged)(); });
      }
    }
    if (inline_run) {
      (*packaged)();
    } else {
      queued_.NotifyOne();
    }
    return result;
  }

 private:
  void StartThreadsLocked() REQUIRES(mu_) {
    try {
      while (threads_.size() < thread_count_) threads_.emplace_back([this] { Loop(); });
    } catch (const std::system_error&) {
      // Fewer threads than asked; the ones running take the queue.
    }
  }

  void Loop() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    for (;;) {
      while (queue_.empty() && !stopping_) queued_.Wait(&mu_);
      if (queue_.empty()) return;  // stopping, and nothing left to run
      std::function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lock.Unlock();
      task();
      lock.Lock();
    }
  }

  const unsigned thread_count_;
  Mutex mu_;
  CondVar queued_;  // a task was queued, or the pool is stopping
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
};

}  // namespace ckptfs
