// SegmentTable: what every segment holds and how much of it is still live.
//
// A segment is free, holds data, or belongs to the metadata log. A data
// segment whose last live byte is released does not become free at once: the
// records that released it must be durable first, or a crash would replay a
// log that still points into overwritten space. So it remembers the record
// it died by; CommitDurable(seq) retires it once that record is committed,
// and it is reused once no read that may have looked it up is still running
// (ReadPins). A segment still buffered by the data log ("active") is never
// freed. Thread-safe: one internal mutex, taken after every other lock but
// the read pins' own.
#pragma once

#include <cstdint>
#include <chrono>
#include <functional>
#include <unordered_map>
#include <vector>

#include "ckptfs/status.h"
#include "format/superblock.h"
#include "meta/space_observer.h"
#include "segment/range_refs.h"
#include "segment/read_pins.h"
#include "util/mutex.h"

namespace ckptfs {

enum class SegmentState : uint8_t { kFree, kData, kMeta };

struct SegmentUsage {
  uint32_t total = 0;
  uint32_t free = 0;
  uint32_t data = 0;
  uint32_t meta = 0;
  uint32_t pending_free = 0;  // dead, waiting for a commit or for reads of them to end
  uint64_t live_bytes = 0;     // stored bytes still referenced (a compressed run counts whole)
  uint64_t shared_bytes = 0;   // raw stored bytes more than one reference shares (copies)
  uint64_t live_file_bytes = 0;  // file bytes those references stand for
  uint32_t reserved = 0;  // free segments kept back for the metadata log and the cleaner
  uint32_t meta_reserved = 0;  // the metadata log's part of `reserved`
  uint64_t pending_reserved_bytes = 0;  // promised to writes waiting for a compressor
  uint64_t fallocated_bytes = 0;  // promised to writes into space fallocate reserved
  uint32_t remote_objects = 0;     // tier objects holding evicted runs still referenced
  uint64_t remote_live_bytes = 0;  // stored bytes of those runs
  uint64_t remote_file_bytes = 0;  // file bytes those references stand for
};

// One data segment as the cleaner sees it.
struct SegmentSummary {
  uint32_t segment;
  uint64_t live_bytes;
  uint64_t age;  // segments written since this one was, a proxy for how cold it is
  bool by_cleaner;  // written by the cleaner (what it moved, or recompressed)
};

class SegmentTable : public SpaceObserver {
 public:
  // Called for a free segment before it is handed out, so writes to it
  // cannot fail for want of space under a sparse store (BlockDevice::
  // Provision). NoSpace skips the segment; other errors fail the allocation.
  using Provisioner = std::function<Status(uint32_t segment)>;

  explicit SegmentTable(const Superblock& sb, Provisioner provision = nullptr);

  // Replay protocol: references are counted while the log replays, then
  // FinishReplay marks the log's segments as metadata and every data segment
  // with no live byte as free.
  void FinishReplay(const std::vector<uint32_t>& meta_segments);

  // Who wants a data segment: each may dip into different reserves. A
  // promised write is one room was promised to: a compressor placing a
  // write it queued, or a write into space fallocate reserved.
  enum class Requester { kUser, kPromised, kCleaner };
  // A fresh segment for the data log, marked active. NoSpace when only the
  // reserves are left: user writes may not take the cleaner's reserve (so
  // cleaning can always make progress) nor the room promised to writes
  // waiting for a compressor or to fallocated space (so those cannot fail),
  // and nothing but the metadata log may take the metadata reserve (so
  // deleting files never fails).
  Result<uint32_t> AllocateData(Requester who = Requester::kUser);
  // Promises room for `bytes` of a write that a compressor will place
  // (stored raw at worst), or that fallocate is about to reserve; NoSpace
  // when user writes could not take them now.
  Status ReservePending(uint64_t bytes);
  // The write was placed (or dropped): its promise ends.
  void ReleasePending(uint64_t bytes);
  // The most ReservePending could promise now, counting the segments that
  // wait for a commit as free (a fallocate commits before it gives up):
  // what statfs reports available, so df and fallocate agree.
  uint64_t PromisableBytes() const;
  // A fresh segment for the metadata log; may dip into the reserve.
  Result<uint32_t> AllocateMeta();
  // Metadata segments of a log chain that the superblock no longer names.
  void FreeMeta(const std::vector<uint32_t>& segments);
  // The data log no longer buffers `segment`.
  void Deactivate(uint32_t segment);

  // `bytes` are file bytes. A raw run's live bytes are those at least one
  // reference covers, counted once however many files share them
  // (RangeRefs). A compressed run is live, whole, while any of its bytes is
  // referenced (its dead parts cannot be reclaimed without decoding it). Pending runs (not yet stored) are ignored. Remote runs
  // (evicted to the tier) count towards their tier object, not a segment.
  // Reserved space (fallocate) counts towards the room promised to writes.
  void Referenced(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes) override;
  void Released(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes) override;

  // Reference changes from now on come from the log record numbered `seq`
  // (PendingLog): a segment they empty waits for that record to be durable.
  void NoteRecord(uint64_t seq);
  // Every record up to `seq` is durable: what they emptied is reused once
  // the reads pinned now are done.
  void CommitDurable(uint64_t seq);
  // Pins the segments a read is about to look up against reuse; take it
  // under the namespace lock, before the lookup, and drop it once the data
  // is in memory.
  ReadPins::Pin PinForRead() { return pins_.Enter(); }

  uint32_t SegmentOf(uint64_t addr) const {
    return static_cast<uint32_t>((addr - data_start_) / segment_size_);
  }
  SegmentUsage Usage() const;
  // Fewer segments free (or about to be) than the low-water mark, twice the
  // reserves or a tenth of the store: when the cleaner (or the evictor)
  // makes room in the background.
  bool SpaceIsLow() const;
  // Segments waiting for a commit to become free; O(1), for the fsync path.
  uint32_t PendingFree() const;
  // File bytes still referenced in the compressed run `phys`.
  uint64_t CompressedRunRefs(const PhysicalExtent& phys) const;
  // Data segments that are written out (not buffered) and not yet free.
  std::vector<SegmentSummary> CleaningCandidates() const;
  uint64_t segment_size() const { return segment_size_; }
  // Data segments the last commit may point into: all but the free ones and
  // those whose death is committed.
  std::vector<uint32_t> DataSegmentsInUse() const;
  // Tier objects the last commit may point into (remote runs): those still
  // referenced and those whose last reference's release is not committed.
  // Sorted.
  std::vector<uint64_t> RemoteObjectsInUse() const;

 private:
  struct Info {
    SegmentState state = SegmentState::kFree;
    bool active = false;
    bool pending_free = false;
    bool by_cleaner = false;
    // File bytes referenced: a segment dies exactly when it reaches zero.
    // `live` is what they occupy on the device, the figure cleaning and
    // space reports need.
    uint64_t refs = 0;
    uint64_t live = 0;
    uint64_t died_seq = 0;
    uint64_t retired_epoch = 0;  // committed dead in this ReadPins epoch; 0: not yet
    uint64_t written_seq = 0;  // write_seq_ when the data log let go of it
    // Free, but the filesystem under a sparse store had no room for it when
    // last asked (Provisioner); skipped until kUnprovisionedRetry passes.
    bool unprovisioned = false;
  };
  // A tier object's references (remote runs), kept until a commit makes
  // their end durable, as a segment's death is.
  struct RemoteObject {
    uint64_t refs = 0;
    uint64_t live = 0;
    uint64_t died_seq = 0;  // meaningful once refs == 0
  };
  void MaybeRetireLocked(uint32_t segment) REQUIRES(mu_);
  // Adds or removes a reference of `bytes` file bytes from `skip` into
  // `phys` to `*live`, the stored bytes of the run's segment or tier
  // object: the bytes of a raw reference no other one covers, a compressed
  // run's whole length with its first reference or its last.
  void AddLiveLocked(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes, uint64_t* live)
      REQUIRES(mu_);
  void RemoveLiveLocked(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes,
                        uint64_t* live) REQUIRES(mu_);
  // Frees retired segments no pinned read can still be using.
  void ReuseRetiredLocked() REQUIRES(mu_);
  // Segments user writes must leave for the writes room was promised to.
  uint32_t PromisedSegmentsLocked() const REQUIRES(mu_);
  Result<uint32_t> TakeFreeLocked(uint32_t keep_free, SegmentState as) REQUIRES(mu_);

  const uint64_t segment_size_;
  const uint64_t data_start_;
  const uint32_t meta_reserve_;
  const uint32_t clean_reserve_;
  const Provisioner provision_;

  ReadPins pins_;

  mutable Mutex mu_;  // taken before the read pins' own
  std::vector<Info> segments_ GUARDED_BY(mu_);
  uint32_t free_count_ GUARDED_BY(mu_) = 0;
  uint32_t pending_free_count_ GUARDED_BY(mu_) = 0;  // retired ones included
  uint32_t retired_count_ GUARDED_BY(mu_) = 0;       // committed, waiting for reads
  uint32_t cursor_ GUARDED_BY(mu_) = 0;  // allocation continues after the last segment taken
  uint64_t record_seq_ GUARDED_BY(mu_) = 0;  // the record whose changes are applying now
  uint64_t pending_reserved_ GUARDED_BY(mu_) = 0;  // bytes promised by ReservePending
  uint64_t fallocated_ GUARDED_BY(mu_) = 0;  // bytes of reserved space referenced
  std::unordered_map<uint64_t, uint64_t> compressed_refs_ GUARDED_BY(mu_);  // by run address
  RangeRefs raw_refs_ GUARDED_BY(mu_);  // raw runs' referenced bytes, by device (or tier) address
  std::unordered_map<uint64_t, RemoteObject> remote_ GUARDED_BY(mu_);  // by tier object
  uint64_t write_seq_ GUARDED_BY(mu_) = 0;
  uint32_t unprovisioned_count_ GUARDED_BY(mu_) = 0;  // free segments marked unprovisioned
  std::chrono::steady_clock::time_point unprovisioned_since_ GUARDED_BY(mu_);
};

}  // namespace ckptfs
