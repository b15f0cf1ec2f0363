// PendingRuns: file data accepted from a write but not yet compressed and
// placed in the data log.
//
// A write to a file that compresses copies its bytes here and returns; the
// compressor threads (fs/compression.cc) take runs in order, encode them and
// append the result to the data log, so the FUSE request threads never wait
// on zstd. Until then the file's extent map points at the run through a
// pending address (PhysicalExtent::kPendingBit | id), and reads copy from
// here. The bytes held are bounded by a budget: a write that would exceed it
// waits for a run to be placed, which is the backpressure that keeps memory
// within the mount's budget when the compressors fall behind.
//
// Thread-safe (one mutex; no I/O or compression happens under it).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ckptfs/status.h"
#include "compress/extent_codec.h"
#include "util/mutex.h"

namespace ckptfs {

struct PendingRun {
  uint64_t id = 0;
  uint64_t ino = 0;
  uint64_t offset = 0;  // file offset written; the run's extents lie in [offset, +size)
  int64_t time_ns = 0;  // when it was written: the file's new mtime
  CompressionPolicy policy;
  std::vector<char> data;
  // Where the run's extents point until it is placed.
  uint64_t address() const;
};

struct PendingRunStats {
  uint64_t runs = 0;         // runs ever queued
  uint64_t bytes = 0;        // bytes ever queued
  uint64_t waits = 0;        // writes that waited for budget
  uint64_t refused = 0;      // writes not taken (budget used up, no waiting)
  uint64_t held_bytes = 0;   // bytes held now
  uint64_t held_runs = 0;    // runs held now
  uint64_t failed_runs = 0;  // runs that could not be placed (held until unmount)
};

class PendingRuns {
 public:
  explicit PendingRuns(uint64_t budget_bytes) : budget_(budget_bytes) {}

  // Copies data[0, len) into a new run for `ino`. While the budget is used
  // up it waits, or with `wait` false returns null at once (the caller then
  // stores the data raw rather than slow the writer down). The run is held
  // (readable, waited for by WaitPlaced) but not handed to a compressor
  // until Queue: the caller first maps it, so no compressor can place a run
  // before its extents exist. IOError once Stop() was called.
  Result<std::shared_ptr<const PendingRun>> Add(uint64_t ino, uint64_t offset,
                                                const CompressionPolicy& policy, const char* data,
                                                size_t len, bool wait = true);
  void Queue(std::shared_ptr<const PendingRun> run);
  // The run behind a pending address, or null once it is gone.
  std::shared_ptr<const PendingRun> Find(uint64_t address) const;

  // The oldest run not yet taken; waits for one. Null once stopped and empty.
  std::shared_ptr<const PendingRun> Take();
  // The run is in the data log and its extents point there (or it was never
  // mapped): forget it.
  void Placed(uint64_t id);
  // The run could not be placed: it stays readable until unmount.
  void Failed(uint64_t id);

  // The newest run's id (0 when none was ever added).
  uint64_t last_id() const;
  // Waits until every run up to `id` was placed or failed.
  void WaitPlaced(uint64_t id);
  // Takers get null once the queue is drained; Add fails from now on.
  void Stop();

  PendingRunStats stats() const;

 private:
  void ReleaseLocked(uint64_t id) REQUIRES(mu_);
  bool FitsLocked(size_t len) const REQUIRES(mu_);

  const uint64_t budget_;
  mutable Mutex mu_;
  CondVar changed_;
  // Held: queued or being placed.
  std::map<uint64_t, std::shared_ptr<const PendingRun>> runs_ GUARDED_BY(mu_);
  std::deque<std::shared_ptr<const PendingRun>> queue_ GUARDED_BY(mu_);  // not yet taken
  std::map<uint64_t, std::shared_ptr<const PendingRun>> failed_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  uint64_t held_bytes_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  PendingRunStats stats_ GUARDED_BY(mu_);
};

}  // namespace ckptfs
