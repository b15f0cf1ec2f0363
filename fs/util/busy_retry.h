// RetryWhileBusy: a store another process holds (a daemon still flushing
// after `fusermount3 -u`, which returns before the flush ends; an fsck) is
// released within seconds, so the mount and fsck wait for it, bounded,
// rather than fail. One loop serves both.
#pragma once

#include <chrono>
#include <thread>

#include "ckptfs/status.h"

namespace ckptfs {

// How long a wait goes unannounced: most flushes end within it, and a
// mount made right after an unmount (scripts, xfstests) should say nothing.
inline constexpr std::chrono::seconds kQuietBusyWait{1};

// Calls `attempt()` (returning a Result<T>) until it fails with anything
// but Busy, succeeds, or `wait` has passed since the first call. Before the
// first wait it calls `on_busy(status)`: a non-OK return stops the retries
// with that status (say, the holder is a live mount, not a flush). Once the
// wait has lasted kQuietBusyWait it calls `announce()`, once, to say why
// nothing happens.
template <typename Attempt, typename OnBusy, typename Announce>
auto RetryWhileBusy(Attempt attempt, std::chrono::duration<double> wait, OnBusy on_busy, Announce announce)
    -> decltype(attempt()) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait);
  bool first = true, announced = false;
  for (;;) {
    auto result = attempt();
    const auto now = std::chrono::steady_clock::now();
    if (result.ok() || result.status().code() != Status::Code::kBusy || now >= deadline) {
      return result;
    }
    if (first) {
      Status go_on = on_busy(result.status());
      if (!go_on.ok()) return go_on;
      first = false;
    }
    if (!announced && now - start >= kQuietBusyWait) {
      announce();
      announced = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace ckptfs
