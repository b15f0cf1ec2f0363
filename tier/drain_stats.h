// DrainStats: how far the RADOS copy of a store is behind the store, as the
// daemon reports it (ckptfs-stat, the root's stats xattrs) and
// `ckptfs-tier wait` reads it.
#pragma once

#include <cstdint>
#include <string>

namespace ckptfs {

struct DrainStats {
  std::string target;            // rados:POOL/NAME
  uint64_t committed_lsn = 0;    // lsn of the store's last committed log block
  uint64_t drained_lsn = 0;      // the last one the published image holds
  bool published = false;        // an image of this store exists in RADOS
  uint64_t behind_bytes = 0;     // bytes the last drain cycle still had to send
  uint64_t behind_ms = 0;        // since the oldest commit RADOS does not have yet
  uint64_t uploaded_bytes = 0;   // sent since the mount
  uint64_t adopted_bytes = 0;    // found already in RADOS at mount, not sent again
  uint64_t image_bytes = 0;      // bytes the published image lists
  uint64_t manifests_published = 0;
  uint64_t objects_removed = 0;
  uint64_t errors = 0;           // failed drain cycles
  uint64_t retries = 0;          // cycles restarted (after an error, or a segment reused mid-cycle)
  uint64_t deferred_ms = 0;      // time spent holding back for a burst
  // Time spent in cycles that had bytes to send, from the end of the
  // store's capture (and of the adoption, at a mount) to the manifest's
  // publication or the cycle's failure: uploaded_bytes over it is the
  // drain's rate by its own clock, as `rados bench` times itself (no
  // connect, no idle time).
  uint64_t sending_ms = 0;
  // Buffers of writes that timed out but that librados still holds, queued
  // to an OSD that does not answer; the drain sends from no more than
  // 4 x (writes in flight + reads ahead) of them.
  uint64_t held_send_buffers = 0;
  bool fenced = false;           // fenced by a takeover (blocklisted, or the manifest claimed): drains no more
  std::string last_error;        // empty once a cycle succeeds
};

}  // namespace ckptfs
