// ReadPins: lets reads use stored extents without holding a lock across
// device I/O, and lets commits free segments without waiting for reads.
//
// A read pins the current epoch while it looks its extents up (under the
// namespace lock) and unpins when its data is in memory. A segment that a
// commit frees is tagged with a new epoch (Advance) and is reused only once
// no read of an older epoch remains (OldestPinned): such a read may have looked up
// extents into it before it died. A read that starts later cannot: the
// records that emptied the segment were applied before the commit.
// Before this, reads held a shared lock across their device I/O that the
// commit took exclusively, so an fsync waited behind every read in flight.
#pragma once

#include <cstdint>
#include <limits>
#include <map>

#include "util/mutex.h"

namespace ckptfs {

class ReadPins {
 public:
  // Holds an epoch pinned until destroyed.
  class Pin {
   public:
    Pin() = default;
    Pin(Pin&& other) noexcept : pins_(other.pins_), epoch_(other.epoch_) { other.pins_ = nullptr; }
    Pin& operator=(Pin&& other) noexcept {
      Release();
      pins_ = other.pins_;
      epoch_ = other.epoch_;
      other.pins_ = nullptr;
      return *this;
    }
    ~Pin() { Release(); }
    void Release() {
      if (pins_) pins_->Exit(epoch_);
      pins_ = nullptr;
    }

   private:
    friend class ReadPins;
    Pin(ReadPins* pins, uint64_t epoch) : pins_(pins), epoch_(epoch) {}
    ReadPins* pins_ = nullptr;
    uint64_t epoch_ = 0;
  };

  Pin Enter() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ++active_[epoch_];
    return Pin(this, epoch_);
  }
  // Starts a new epoch and returns it: what is retired now waits for the
  // reads pinned before.
  uint64_t Advance() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return ++epoch_;
  }
  // The epoch of the oldest read still pinned (the maximum when none is): what
  // was retired in an epoch up to it is out of every read's reach.
  uint64_t OldestPinned() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return active_.empty() ? std::numeric_limits<uint64_t>::max() : active_.begin()->first;
  }

 private:
  void Exit(uint64_t epoch) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto it = active_.find(epoch);
    if (--it->second == 0) active_.erase(it);
  }

  Mutex mu_;
  uint64_t epoch_ GUARDED_BY(mu_) = 1;
  std::map<uint64_t, uint32_t> active_ GUARDED_BY(mu_);  // pinned reads by epoch
};

}  // namespace ckptfs
