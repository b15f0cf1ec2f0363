// DrainStats: how far the RADOS copy of a store is behind the store, as the
// daemon reports it (ckptfs-stat, the root's stats xattrs, Prometheus) and
// `ckptfs-tier wait` reads it back (stats_json.h).
#pragma once

#include <cstdint>
#include <string>

#include "ckptfs/stat_field.h"

// Every figure once: X(type, name, kind, what it counts). The order is the
// reports'. sending_ms is the time spent in cycles that had bytes to send,
// from the end of the store's capture (and of the adoption, at a mount) to
// the manifest's publication or the cycle's failure: uploaded_bytes over it
// is the drain's rate by its own clock, as `rados bench` times itself (no
// connect, no idle time).
#define CKPTFS_DRAIN_STATS(X) \
  X(bool, published, kGauge, "1 once an image of this store exists in RADOS") \
  X(uint64_t, committed_lsn, kGauge, "lsn of the store's last committed log block") \
  X(uint64_t, drained_lsn, kGauge, "the last lsn the published image holds") \
  X(uint64_t, behind_bytes, kGauge, "bytes the last drain cycle still had to send") \
  X(uint64_t, behind_ms, kGauge, "time since the oldest commit RADOS does not have yet") \
  X(uint64_t, uploaded_bytes, kCounter, "bytes sent to RADOS since the mount") \
  X(uint64_t, adopted_bytes, kCounter, "bytes found already in RADOS at the mount, not sent again") \
  X(uint64_t, image_bytes, kGauge, "bytes the published image lists") \
  X(uint64_t, manifests_published, kCounter, "manifests published") \
  X(uint64_t, objects_removed, kCounter, "objects removed that no manifest names any more") \
  X(uint64_t, errors, kCounter, "drain cycles that failed") \
  X(uint64_t, retries, kCounter, "drain cycles restarted: after an error, or a segment reused mid-cycle") \
  X(uint64_t, deferred_ms, kCounter, "time the drain held back for a burst") \
  X(uint64_t, sending_ms, kCounter, "time spent in drain cycles that had bytes to send") \
  X(uint64_t, held_send_buffers, kGauge, \
    "buffers of timed-out writes librados still holds, queued to an OSD that does not answer") \
  X(bool, fenced, kGauge, "1 once fenced by a takeover (blocklisted, or the manifest claimed): drains no more")

namespace ckptfs {

struct DrainStats {
  std::string target;      // rados:POOL/NAME
  std::string last_error;  // empty once a cycle succeeds
  CKPTFS_DRAIN_STATS(CKPTFS_STAT_MEMBER)
};

namespace drain_stats {
using Stats = DrainStats;
inline constexpr StatField<Stats> kFields[] = {CKPTFS_DRAIN_STATS(CKPTFS_STAT_FIELD)};
}  // namespace drain_stats

// The figures of DrainStats but the two strings, which the reports show apart.
inline constexpr const auto& kDrainStatFields = drain_stats::kFields;

}  // namespace ckptfs
