// ProgressBar: a one-line byte counter on stderr, redrawn a few times a
// second, and only when stderr is a terminal so logs and pipes stay clean.
// Ranks call Add() from their own threads; it is a single relaxed atomic add.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "util/mutex.h"

namespace ckptfs::replay {

class ProgressBar {
 public:
  // `enabled` false makes every call a no-op (the caller decides: tty and no --quiet).
  ProgressBar(std::string label, uint64_t total_bytes, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void Add(uint64_t bytes) { done_.fetch_add(bytes, std::memory_order_relaxed); }

  static bool StderrIsTerminal();

 private:
  void Draw(bool final_draw);

  std::string label_;
  uint64_t total_;
  bool enabled_;
  std::atomic<uint64_t> done_{0};
  Mutex mutex_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread painter_;
};

}  // namespace ckptfs::replay
