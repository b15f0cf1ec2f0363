// RetryWhileBusy: a store another process holds (a daemon still flushing
// after `fusermount3 -u`, which returns before the flush ends; an fsck) is
// released within seconds, so the mount and fsck wait for it, bounded,
// rather than fail. One loop serves both.
#pragma once

#include <chrono>
#include <thread>

#include "ckptfs/status.h"

namespace ckptfs {

// Calls `attempt()` (returning a Result<T>) until it fails with anything
// but Busy, succeeds, or `wait` has passed since the first call. Before the
// first wait it calls `on_busy(status)`: a non-OK return stops the retries
// with that status (say, the holder is a live mount, not a flush).
template <typename Attempt, typename OnBusy>
auto RetryWhileBusy(Attempt attempt, std::chrono::duration<double> wait, OnBusy on_busy)
    -> decltype(attempt()) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait);
  bool first = true;
  for (;;) {
    auto result = attempt();
    if (result.ok() || result.status().code() != Status::Code::kBusy ||
        std::chrono::steady_clock::now() >= deadline) {
      return result;
    }
    if (first) {
      Status go_on = on_busy(result.status());
      if (!go_on.ok()) return go_on;
      first = false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace ckptfs
