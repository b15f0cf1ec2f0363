// SegmentTable: what every segment holds and how much of it is still live.
//
// A segment is free, holds data, or belongs to the metadata log. A data
// segment whose last live byte is released does not become free at once: the
// records that released it must be durable first, or a crash would replay a
// log that still points into overwritten space. So it waits for the commit
// epoch it died in; CommitDurable(epoch) frees it. A segment still buffered
// by the data log ("active") is never freed. Thread-safe (one internal mutex,
// taken last: callers may hold their own locks).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "ckptfs/status.h"
#include "format/superblock.h"
#include "meta/space_observer.h"

namespace ckptfs {

enum class SegmentState : uint8_t { kFree, kData, kMeta };

struct SegmentUsage {
  uint32_t total = 0;
  uint32_t free = 0;
  uint32_t data = 0;
  uint32_t meta = 0;
  uint32_t pending_free = 0;
  uint64_t live_bytes = 0;
  uint32_t reserved = 0;  // free segments kept back for the metadata log and the cleaner
  uint32_t meta_reserved = 0;  // the metadata log's part of `reserved`
};

// One data segment as the cleaner sees it.
struct SegmentSummary {
  uint32_t segment;
  uint64_t live_bytes;
  uint64_t age;  // segments written since this one was, a proxy for how cold it is
};

class SegmentTable : public SpaceObserver {
 public:
  explicit SegmentTable(const Superblock& sb);

  // Replay protocol: references are counted while the log replays, then
  // FinishReplay marks the log's segments as metadata and every data segment
  // with no live byte as free.
  void FinishReplay(const std::vector<uint32_t>& meta_segments);

  // A fresh segment for the data log, marked active. NoSpace when only the
  // reserves are left: user writes may not take the cleaner's reserve (so
  // cleaning can always make progress), and nothing but the metadata log
  // may take the metadata reserve (so deleting files never fails).
  Result<uint32_t> AllocateData(bool for_cleaner = false);
  // A fresh segment for the metadata log; may dip into the reserve.
  Result<uint32_t> AllocateMeta();
  // Metadata segments of a log chain that the superblock no longer names.
  void FreeMeta(const std::vector<uint32_t>& segments);
  // The data log no longer buffers `segment`.
  void Deactivate(uint32_t segment);

  void Referenced(const PhysicalExtent& phys, uint64_t bytes) override;
  void Released(const PhysicalExtent& phys, uint64_t bytes) override;

  // Starts a commit: segments that died so far wait for the returned epoch.
  uint64_t BeginCommit();
  // The commit of `epoch` is durable: free what died in it or before.
  void CommitDurable(uint64_t epoch);

  uint32_t SegmentOf(uint64_t addr) const {
    return static_cast<uint32_t>((addr - data_start_) / segment_size_);
  }
  SegmentUsage Usage() const;
  // Segments waiting for a commit to become free; O(1), for the fsync path.
  uint32_t PendingFree() const;
  // Data segments that are written out (not buffered) and not yet free.
  std::vector<SegmentSummary> CleaningCandidates() const;
  uint64_t segment_size() const { return segment_size_; }

 private:
  struct Info {
    SegmentState state = SegmentState::kFree;
    bool active = false;
    bool pending_free = false;
    uint64_t live = 0;
    uint64_t died_epoch = 0;
    uint64_t written_seq = 0;  // write_seq_ when the data log let go of it
  };
  void MaybeRetireLocked(uint32_t segment);
  Result<uint32_t> TakeFreeLocked(uint32_t keep_free, SegmentState as);

  const uint64_t segment_size_;
  const uint64_t data_start_;
  const uint32_t meta_reserve_;
  const uint32_t clean_reserve_;

  mutable std::mutex mu_;  // guards everything below
  std::vector<Info> segments_;
  uint32_t free_count_ = 0;
  uint32_t pending_free_count_ = 0;
  uint32_t cursor_ = 0;  // allocation continues after the last segment taken
  uint64_t epoch_ = 1;
  uint64_t write_seq_ = 0;
};

}  // namespace ckptfs
