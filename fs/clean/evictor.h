// Evictor: makes room on a store whose device is a cache of its tier
// (include/ckptfs/remote_tier.h). A data segment whose current incarnation
// the tier's last published image holds can be given up without copying a
// byte: every run in it is re-pointed (Journal::Apply of the same mapping
// with a remote address) at the tier's object, and the segment dies and is
// reused like a cleaned one. Reads of those runs then go to the tier
// (io/tier_routing_device.h).
//
// The oldest segments go first: in a checkpoint store they hold the oldest
// checkpoints, the ones a restart is least likely to read. A run is moved
// only if the published ranges cover it and, when it is re-pointed, the file
// still maps it and the segment is still in the incarnation the tier holds;
// a segment with a run the tier lacks (written after the image was captured)
// stays.
//
// One eviction at a time (its own lock); the cleaner also keeps evictions
// apart from its cleaning passes (Cleaner::pass_mu_), so one pass
// (cleaning or evicting) runs at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "ckptfs/status.h"
#include "format/superblock.h"
#include "io/tier_routing_device.h"
#include "io/write_tracking_device.h"
#include "journal/journal.h"
#include "segment/segment_table.h"
#include "util/mutex.h"

namespace ckptfs {

struct EvictorStats {
  uint64_t segments = 0;  // segments given up to the tier
  uint64_t runs = 0;      // mappings re-pointed
  uint64_t bytes = 0;     // stored bytes those segments held live
};

class Evictor {
 public:
  // Every pointer must outlive the evictor.
  Evictor(const Superblock& sb, Journal* journal, SegmentTable* segments,
          WriteTrackingDevice* tracking, TierRoutingDevice* routing)
      : sb_(sb), journal_(journal), segments_(segments), tracking_(tracking), routing_(routing) {}

  // Gives up to `max_victims` published segments to the tier, oldest first,
  // and commits. The number given up (0: no tier, or nothing it holds).
  Result<size_t> EvictOnce(size_t max_victims) EXCLUDES(pass_mu_);
  // Whether a tier is attached (evicting can make room at all).
  bool active() const { return routing_->tier() != nullptr; }
  // The tier's image count (RemoteTier::ImageSeq), 0 without a tier: taken
  // before an EvictOnce, for the WaitForTier after it.
  uint64_t TierImage();
  // Waits up to `timeout` for the tier to publish an image past the
  // `seen`th (more to evict); false when it did not, or no tier is
  // attached.
  bool WaitForTier(uint64_t seen, std::chrono::milliseconds timeout);

  EvictorStats stats() const {
    return {evicted_segments_.load(), evicted_runs_.load(), evicted_bytes_.load()};
  }

 private:
  const Superblock sb_;
  Journal* const journal_;
  SegmentTable* const segments_;
  WriteTrackingDevice* const tracking_;
  TierRoutingDevice* const routing_;

  // Held for a whole EvictOnce: two at once would pick the same victims.
  Mutex pass_mu_;

  std::atomic<uint64_t> evicted_segments_{0};
  std::atomic<uint64_t> evicted_runs_{0};
  std::atomic<uint64_t> evicted_bytes_{0};
};

}  // namespace ckptfs
