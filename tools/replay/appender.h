// Appender: a training log growing beside the checkpoints, as a trainer's
// logger writes one: a thread appends a line-sized record every 100 ms at
// a set rate to DIR/train.log, opened O_APPEND, and fsyncs it every second.
// Its bytes land in the same segments as the checkpoint data written at the
// same time, so deleting checkpoints leaves segments partly live: the case
// that makes a log-structured store clean.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "ckptfs/status.h"
#include "util/mutex.h"

namespace ckptfs::replay {

class Appender {
 public:
  // Starts appending to `path` at `bytes_per_s` (> 0).
  Appender(std::string path, uint64_t bytes_per_s);
  // Stops, if Stop was not called.
  ~Appender();
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;

  // Stops the thread; the first error it met, if any.
  Status Stop();
  uint64_t bytes_written() const { return bytes_.load(); }

 private:
  void Run();
  // Waits until `deadline` or Stop; true if stopping.
  bool WaitUntilStopping(std::chrono::steady_clock::time_point deadline) EXCLUDES(mu_);

  const std::string path_;
  const uint64_t bytes_per_s_;
  std::atomic<uint64_t> bytes_{0};
  Mutex mu_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mu_) = false;
  Status error_;           // set by the thread before it exits; read after join
  std::thread thread_;
};

}  // namespace ckptfs::replay
