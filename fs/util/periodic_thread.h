// PeriodicThread: a background thread that runs a task every interval, or
// sooner when woken, until stopped. The journal's committer and the cleaner
// are both one. The task runs without the thread's lock held.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "util/mutex.h"

namespace ckptfs {

class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread() { Stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Starts running `task` every `interval`; does nothing once started or
  // stopped.
  void Start(std::chrono::milliseconds interval, std::function<void()> task) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (thread_.joinable() || stop_) return;
    thread_ = std::thread([this, interval, task = std::move(task)] { Loop(interval, task); });
  }
  // Runs the task now rather than at the end of the interval; called while
  // the task runs, or before the thread is up, it runs the task again as
  // soon as that ends (the wake is not lost).
  void Wake() EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      wake_ = true;
    }
    cv_.NotifyAll();
  }
  // Ends the thread after the task in progress, if any. Final.
  void Stop() EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.NotifyAll();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

 private:
  void Loop(std::chrono::milliseconds interval, const std::function<void()>& task) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (!stop_) {
      if (!wake_) cv_.WaitFor(&mu_, interval);
      wake_ = false;
      if (stop_) break;
      lock.Unlock();
      task();
      lock.Lock();
    }
  }

  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  bool wake_ GUARDED_BY(mu_) = false;  // Wake() since the task last started
  std::thread thread_;  // started and joined only by Start and Stop
};

}  // namespace ckptfs
