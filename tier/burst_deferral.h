// BurstDeferral: whether the drain should wait for a burst of writes to
// the store to end. While the store takes more than `busy_bytes_per_second`
// the drain's reads, CRCs and, on a shared machine, the OSDs' work would
// slow the burst; but it waits no longer than `max_deferral` at a time,
// and not at all while the store is short of space (it can only evict what
// the image holds). Asked once per drain tick, by the drain's thread only.
#pragma once

#include <chrono>
#include <cstdint>

#include "ckptfs/committed_image.h"
#include "drain_progress.h"

namespace ckptfs {

class BurstDeferral {
 public:
  // 0 for either: never wait.
  BurstDeferral(uint64_t busy_bytes_per_second, std::chrono::milliseconds max_deferral)
      : busy_bytes_per_second_(busy_bytes_per_second), max_deferral_(max_deferral) {}

  // True while a burst is on and the drain may still wait for it to end;
  // the time spent waiting goes to `progress` (deferred_ms).
  bool Defer(const CommittedImageSource& source, DrainProgress* progress);

 private:
  const uint64_t busy_bytes_per_second_;
  const std::chrono::milliseconds max_deferral_;
  std::chrono::steady_clock::time_point last_tick_;
  uint64_t last_bytes_written_ = 0;
  std::chrono::steady_clock::time_point deferring_since_;
  bool deferring_ = false;
};

}  // namespace ckptfs
