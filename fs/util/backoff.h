// Backoff: how long to wait before retrying something that failed: the
// delay doubles with each failure in a row, from `first` up to `max`, and
// starts over after a success. The drain's cycles and a tier attachment's
// reconnects share it.
#pragma once

#include <algorithm>
#include <chrono>

namespace ckptfs {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds first, std::chrono::milliseconds max) : first_(first), max_(max) {}

  // One more failure: the delay before the next try, from now.
  std::chrono::milliseconds Failed() {
    delay_ = std::min(max_, std::max(2 * delay_, first_));
    retry_at_ = std::chrono::steady_clock::now() + delay_;
    return delay_;
  }
  void Succeeded() {
    delay_ = std::chrono::milliseconds(0);
    retry_at_ = {};
  }
  // Whether the delay after the last failure has passed.
  bool Ready() const { return std::chrono::steady_clock::now() >= retry_at_; }
  // The delay after the next failure, should one follow.
  std::chrono::milliseconds next() const { return std::min(max_, std::max(2 * delay_, first_)); }

 private:
  const std::chrono::milliseconds first_;
  const std::chrono::milliseconds max_;
  std::chrono::milliseconds delay_{0};
  std::chrono::steady_clock::time_point retry_at_;
};

}  // namespace ckptfs
