// Drainer: copies a store's committed state into a RADOS image in the
// background, so a checkpoint outlives the node (issue 14; the layout and its
// consistency argument are in docs/design.md, "RADOS tier").
//
// Each cycle captures the last commit (CommittedImageSource), sends the
// bytes of it that the image lacks, and then publishes a manifest naming
// them: the image in RADOS is always exactly some commit, because a
// manifest names only bytes already written, and the objects it names are
// never rewritten in the ranges it lists (each segment incarnation has its
// own object). Objects the new manifest no longer names are removed after
// `gc_delay`, so a read-only mount of an older manifest elsewhere keeps
// working meanwhile.
//
// The image has one writer: the drainer holds an exclusive RADOS lock on the
// image's lock object. The lock's cookie names the local store, so a daemon
// of the same store (whose previous daemon was killed: the local store's
// flock proves it dead) takes the lock over; anyone else is refused. Each
// writer also claims the manifest (RadosImage::Claim), and sends, removes
// and publishes only while the manifest still names it; each object names
// its owner too, and every write to it is refused unless it is its
// owner's (RadosImage::WriteAs), as is every removal. So a writer whose
// lock was broken (`ckptfs-tier takeover`) while it was hung changes no
// byte its successor's manifest names when it wakes, not even with writes
// it had in flight (docs/design.md, "One writer").
//
// Errors (RADOS unreachable, slow, full) never reach the filesystem: the
// cycle fails, is counted and logged, and is retried with backoff.
//
// The drainer is also the store's RemoteTier (include/ckptfs/remote_tier.h):
// it tells the store which segment incarnations the published image holds,
// so the store may evict them, and serves reads of evicted runs. Each image
// it publishes keeps the objects the store's commit points at by remote
// address (the manifest's evicted list).
//
// Threads: Start() runs cycles on one background thread; the state below
// stats_mu_ is what other threads read (Stats, DrainUntil), and the view
// below view_mu_ what the store's threads read (Published, ReadRemote). The
// plan (known_, next_object_id_, published_) belongs to the cycle.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ckptfs/committed_image.h"
#include "ckptfs/remote_tier.h"
#include "drain_stats.h"
#include "image_manifest.h"
#include "rados_image.h"
#include "util/mutex.h"
#include "util/periodic_thread.h"
#include "util/worker_pool.h"

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

  DrainStats Stats() const EXCLUDES(stats_mu_);

  // RemoteTier.
  std::optional<RemoteSegment> Published(uint32_t segment, uint64_t incarnation) override
      EXCLUDES(view_mu_);
  Status ReadRemote(uint64_t object, uint64_t offset, void* buf, size_t len) override
      EXCLUDES(view_mu_);
  uint64_t ImageSeq() override EXCLUDES(view_mu_);
  bool WaitForNewerImage(uint64_t seen, std::chrono::milliseconds timeout) override EXCLUDES(view_mu_);

  static std::string LockCookie(uint64_t store_id);

 private:
  Drainer(std::unique_ptr<RadosImage> image, CommittedImageSource* source, uint64_t store_id, std::string owner,
          const DrainOptions& options);
  // Whose the object is, for the next write to it (RadosImage::WriteAs).
  enum class Ownership {
    kToCreate,    // not made yet: the next write makes it, or finds the id taken
    kToTakeOver,  // a previous writer's, named by the manifest read at Open
    kOwned,       // made or taken over by this writer
  };
  // What the image holds of one local segment incarnation.
  struct Known {
    uint64_t incarnation = 0;
    uint64_t object_id = 0;
    std::vector<ImageChunk> chunks;  // sorted, disjoint
    Ownership ownership = Ownership::kToCreate;
  };
  struct Piece {
    uint32_t segment;
    uint64_t offset;
    uint64_t length;
  };

  // One drain step: capture, send, publish. Ok with nothing to do.
  Status CycleLocked() REQUIRES(cycle_mu_);
  // Lists the image once, when the drain first catches up: objects a dead
  // writer left unnamed go to the garbage, and ids continue past them. Not
  // before the first send: a listing visits every placement group of the
  // pool (0.6 s on the test cluster), and the ids need no listing to be
  // safe (see ScanObjectsLocked).
  Status ScanObjectsLocked() REQUIRES(cycle_mu_);
  // Sends the object of `k`, a segment's entry being dropped, to the
  // garbage with the next manifest, unless the published one names it.
  void DropUnpublishedLocked(uint32_t segment, const Known& k) REQUIRES(cycle_mu_);
  // Makes the previous writer's chunks of segments this store still holds
  // unchanged (checked by CRC) count as sent.
  Status AdoptLocked(const CommittedImage& image) REQUIRES(cycle_mu_);
  // Sends `pieces` of the segments' current incarnations (known_). Sets
  // `redo` when the commit cannot be completed this cycle, but a later one
  // may: a segment was handed out again while it was read, or an object id
  // was found taken.
  Status SendLocked(const std::vector<Piece>& pieces, uint64_t segment_bytes, bool* redo) REQUIRES(cycle_mu_);
  // How the next write to `k`'s object goes; for an object to take over,
  // looks its owner up first, into `from`.
  Result<RadosImage::WriteAs> WriteAsLocked(uint32_t segment, const Known& k, std::string* from)
      REQUIRES(cycle_mu_);
  // After writes to the objects of `segments` were refused for their
  // owner: an id taken by an object a dead writer left gets the segment a
  // new object; one taken over by a successor fences this writer.
  Status SettleContestedLocked(const std::set<uint32_t>& segments) REQUIRES(cycle_mu_);
  Status PublishLocked(const CommittedImage& image) REQUIRES(cycle_mu_);
  // Makes the view (view_mu_) show `published_`, whose segments held the
  // incarnations `image` names (null: not known, as for a manifest read at
  // Open: nothing is evictable until the first publish).
  void UpdateViewLocked(const CommittedImage* image) REQUIRES(cycle_mu_) EXCLUDES(view_mu_);
  // Removes the garbage that is due, if the image is still this writer's.
  Status CollectGarbageLocked() REQUIRES(cycle_mu_);
  // Ok while the manifest still names this writer (RadosImage::CheckOwner).
  Status CheckClaimLocked() REQUIRES(cycle_mu_);
  void Tick() EXCLUDES(cycle_mu_);
  // True while a burst is on and the drain may still wait for it to end.
  bool DeferForBurstLocked() REQUIRES(cycle_mu_);
  void NoteError(const Status& s) EXCLUDES(stats_mu_);

  const std::unique_ptr<RadosImage> image_;
  CommittedImageSource* const source_;
  const uint64_t store_id_;
  const std::string owner_;  // the manifest's owner while this writer has the image (RadosImage::Claim)
  const DrainOptions options_;

  // When DrainUntil must be done (at unmount): no write starts after it,
  // so a drain far behind does not hold the unmount for all it has to send.
  // A steady_clock count, the most there is while no DrainUntil runs, the
  // least once Stop is called. Not under cycle_mu_: the thread's cycle,
  // which may hold that lock while it sends a whole store, must see it too.
  std::atomic<int64_t> send_deadline_{std::numeric_limits<int64_t>::max()};

  // One cycle at a time (the thread's, or DrainUntil's on unmount).
  Mutex cycle_mu_ ACQUIRED_BEFORE(stats_mu_, view_mu_);
  bool scanned_ GUARDED_BY(cycle_mu_) = false;
  bool adopted_ GUARDED_BY(cycle_mu_) = false;
  std::map<uint32_t, Known> known_ GUARDED_BY(cycle_mu_);
  uint64_t next_object_id_ GUARDED_BY(cycle_mu_) = 1;
  ImageManifest published_ GUARDED_BY(cycle_mu_);  // publish_seq 0: none yet
  std::chrono::steady_clock::time_point retry_at_ GUARDED_BY(cycle_mu_);
  // When the claim was last found to be this writer's.
  std::chrono::steady_clock::time_point claim_checked_at_ GUARDED_BY(cycle_mu_);
  std::chrono::milliseconds backoff_ GUARDED_BY(cycle_mu_){0};
  uint64_t last_bytes_written_ GUARDED_BY(cycle_mu_) = 0;
  std::chrono::steady_clock::time_point last_tick_ GUARDED_BY(cycle_mu_);
  std::chrono::steady_clock::time_point deferring_since_ GUARDED_BY(cycle_mu_);
  bool deferring_ GUARDED_BY(cycle_mu_) = false;
  // Objects to remove once their time comes.
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>> garbage_
      GUARDED_BY(cycle_mu_);
  // Objects sent to and never named by a manifest we published, whose
  // segments' entries are gone: garbage once the next manifest is out.
  std::vector<std::string> dropped_unpublished_ GUARDED_BY(cycle_mu_);

  // What the last published image holds, for the store's threads.
  struct HeldSegment {
    uint64_t incarnation = 0;
    RemoteSegment where;
  };
  mutable Mutex view_mu_;
  std::map<uint32_t, HeldSegment> view_segments_ GUARDED_BY(view_mu_);
  std::map<uint64_t, uint32_t> view_objects_ GUARDED_BY(view_mu_);  // object -> its segment
  uint64_t view_seq_ GUARDED_BY(view_mu_) = 0;  // views shown so far
  CondVar view_changed_;  // view_seq_ grew

  mutable Mutex stats_mu_;
  DrainStats stats_ GUARDED_BY(stats_mu_);
  std::chrono::steady_clock::time_point behind_since_ GUARDED_BY(stats_mu_);
  std::chrono::steady_clock::duration sending_ GUARDED_BY(stats_mu_){0};  // stats_.sending_ms, unrounded
  bool behind_ GUARDED_BY(stats_mu_) = false;

  // What SendLocked reads pieces into and sends them from; between cycles,
  // only those librados still holds (RadosImage::SendBuffer).
  std::deque<RadosImage::SendBuffer> send_buffers_ GUARDED_BY(cycle_mu_);
  // Reads the pieces SendLocked sends next (reads_ahead threads).
  WorkerPool piece_readers_;
  PeriodicThread thread_;  // declared after piece_readers_: joined first
  bool stopped_ GUARDED_BY(cycle_mu_) = false;
};

}  // namespace ckptfs
