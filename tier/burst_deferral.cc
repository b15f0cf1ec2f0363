// BurstDeferral: see burst_deferral.h.
#include "burst_deferral.h"

namespace ckptfs {

bool BurstDeferral::Defer(const CommittedImageSource& source, DrainProgress* progress) {
  const auto now = std::chrono::steady_clock::now();
  const uint64_t written = source.BytesWritten();
  const double seconds = std::chrono::duration<double>(now - last_tick_).count();
  // A store running out of room needs the drain now: what it has not
  // drained it cannot evict.
  const bool busy = last_tick_.time_since_epoch().count() != 0 && seconds > 0 && busy_bytes_per_second_ > 0 &&
                    (written - last_bytes_written_) / seconds > busy_bytes_per_second_ && !source.SpaceIsLow();
  last_tick_ = now;
  last_bytes_written_ = written;
  if (!busy || max_deferral_.count() == 0) {
    if (deferring_) progress->NoteDeferred(now - deferring_since_);
    deferring_ = false;
    return false;
  }
  if (!deferring_) {
    deferring_ = true;
    deferring_since_ = now;
  }
  if (now - deferring_since_ < max_deferral_) return true;
  // Held back long enough: a store that never rests still gets drained.
  progress->NoteDeferred(now - deferring_since_);
  deferring_since_ = now;
  return false;
}

}  // namespace ckptfs
