// Drainer: copies a store's committed state into a RADOS image in the
// background, so a checkpoint outlives the node (issue 14; the layout and its
// consistency argument are in docs/design.md, "RADOS tier").
//
// Each cycle captures the last commit (CommittedImageSource), sends the
// bytes of it that the image lacks, and then publishes a manifest naming
// them: the image in RADOS is always exactly some commit. Objects the new
// manifest no longer names are removed after `gc_delay`, so a read-only
// mount of an older manifest elsewhere keeps working meanwhile.
//
// The Drainer runs the cycles; its parts do the work:
//   ImageWriter       the image's one writer: lock, claim, fence, takeover
//   DrainPlan         what the image holds and will hold, object by object
//                     (with its GarbageCollector)
//   ChunkUploader     sends the pieces the plan lacks
//   PublishedView     what the last published image holds, for the store's
//                     threads: the RemoteTier (include/ckptfs/remote_tier.h)
//                     through which the store evicts runs and reads them back
//   DrainProgress     the figures (DrainStats)
//   BurstDeferral     whether to wait for a burst of writes to end
//
// Errors (RADOS unreachable, slow, full) never reach the filesystem: the
// cycle fails, is counted and logged, and is retried with backoff.
//
// Threads: Start() runs cycles on one background thread; DrainUntil runs
// them on the caller's (at unmount). One cycle at a time (cycle_mu_); the
// view and the figures are read by any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "burst_deferral.h"
#include "chunk_uploader.h"
#include "ckptfs/committed_image.h"
#include "ckptfs/remote_tier.h"
#include "drain_plan.h"
#include "drain_progress.h"
#include "drain_stats.h"
#include "image_writer.h"
#include "published_view.h"
#include "rados_image.h"
#include "util/backoff.h"
#include "util/mutex.h"
#include "util/periodic_thread.h"

namespace ckptfs {

struct DrainOptions {
  // One RADOS write, and one chunk of the image. 2 MiB: on the 3-OSD dev
  // cluster the OSDs spent 3.8-4.0 s of CPU per GB of 2 MiB writes against
  // 6.4-7.1 s for 4 MiB, and the drain ran 1.15x faster
  // (docs/tuning.md#drain-write-size). -o drain_write= sets it per mount.
  uint64_t chunk_bytes = 2ull << 20;
  unsigned max_in_flight = 8;         // writes outstanding at once
  unsigned reads_ahead = 2;           // local reads of the next pieces meanwhile
  std::chrono::milliseconds interval{200};  // how often to look for a new commit
  std::chrono::milliseconds max_backoff{10000};
  std::chrono::seconds gc_delay{300};  // before removing objects a manifest dropped
  // While the store takes more than busy_bytes_per_second of writes, the
  // drain waits (its reads, CRCs and, on a shared machine, the OSDs' work
  // would slow the burst), but never longer than max_deferral behind, and
  // not at all while the store is short of space (it can only evict what
  // the image holds).
  // 0 for either: drain at once, always.
  uint64_t busy_bytes_per_second = 64ull << 20;
  std::chrono::milliseconds max_deferral{60000};
  // How often an idle drain checks its claim on the image: a writer whose
  // image was taken over finds out, and offers the store no more evictions
  // to it (docs/design.md, "One writer").
  std::chrono::milliseconds idle_claim_check{10000};
};

class Drainer : public RemoteTier {
 public:
  // Takes the image's writer lock and reads its manifest. Busy when another
  // writer holds the image; Invalid when the image holds another store.
  static Result<std::unique_ptr<Drainer>> Open(std::unique_ptr<RadosImage> image,
                                               CommittedImageSource* source, uint64_t store_id,
                                               const DrainOptions& options);
  ~Drainer() override;

  void Start();
  // Stops the background thread after its cycle (which starts no write
  // once Stop is called) and releases the lock. Final, and idempotent.
  void Stop() EXCLUDES(cycle_mu_);
  // Runs cycles until the image holds commit `seq` (or the store's commit
  // as of the call, for 0) or `timeout` passes; the cycle's error, or
  // Busy on timeout. No write starts after the timeout, the thread's
  // included: it returns once the writes then in flight and the cycle's
  // other RADOS calls (each bounded by rados_timeout) are done.
  Status DrainUntil(uint64_t seq, std::chrono::milliseconds timeout) EXCLUDES(cycle_mu_);

  DrainStats Stats() const;

  // RemoteTier, answered by the view.
  std::optional<RemoteSegment> Published(uint32_t segment, uint64_t incarnation) override {
    return view_.Published(segment, incarnation);
  }
  Status ReadRemote(uint64_t object, uint64_t offset, void* buf, size_t len) override {
    return view_.ReadRemote(object, offset, buf, len);
  }
  uint64_t ImageSeq() override { return view_.Seq(); }
  bool WaitForNewerImage(uint64_t seen, std::chrono::milliseconds timeout) override {
    return view_.WaitForNewer(seen, timeout);
  }

  static std::string LockCookie(uint64_t store_id) { return ImageWriter::LockCookie(store_id); }

 private:
  Drainer(std::unique_ptr<ImageWriter> writer, CommittedImageSource* source, const DrainOptions& options);
  // One drain step: capture, send, publish. Ok with nothing to do.
  Status CycleLocked() REQUIRES(cycle_mu_);
  Status PublishLocked(const CommittedImage& image) REQUIRES(cycle_mu_);
  void Tick() EXCLUDES(cycle_mu_);

  CommittedImageSource* const source_;
  const DrainOptions options_;
  RadosImage* const image_;  // the writer's; thread-safe

  // When DrainUntil must be done (at unmount), for ChunkUploader: a
  // steady_clock count, the most there is while no DrainUntil runs, the
  // least once Stop is called. Not under cycle_mu_: the thread's cycle,
  // which may hold that lock while it sends a whole store, must see it too.
  std::atomic<int64_t> send_deadline_{std::numeric_limits<int64_t>::max()};

  // One cycle at a time (the thread's, or DrainUntil's on unmount).
  Mutex cycle_mu_;
  const std::unique_ptr<ImageWriter> writer_ PT_GUARDED_BY(cycle_mu_);
  DrainPlan plan_ GUARDED_BY(cycle_mu_);
  ChunkUploader uploader_ GUARDED_BY(cycle_mu_);
  BurstDeferral deferral_ GUARDED_BY(cycle_mu_);
  Backoff backoff_ GUARDED_BY(cycle_mu_);

  PublishedView view_;
  DrainProgress progress_;
  PeriodicThread thread_;  // last: joined first
};

}  // namespace ckptfs
