// Journal: the namespace and the only ways it changes. It owns the
// Namespace, the records applied in memory but not yet committed
// (PendingLog), the metadata log chain (its writer, its segments, the
// superblock that names its head), commit and log compaction, the committer
// thread, and the store's failure state.
//
// Every change goes through Apply (validated by the caller, applied and
// queued for the log), Reserve and Fill (a write whose stored place a
// compressor decides later), under the namespace lock held exclusively, so
// the log order is exactly the order changes were applied in. Commit makes
// the data the records point at durable first, then the records (see
// docs/design.md, "Commit").
//
// Locks, outermost first: commit_mu_ (one commit at a time), then mu_ (the
// namespace lock: shared for lookups and reads, exclusive for changes). The
// data log, segment table and failure state have locks of their own, taken
// inside these.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ckptfs/options.h"
#include "ckptfs/status.h"
#include "format/superblock.h"
#include "io/block_device.h"
#include "log/log_writer.h"
#include "log/pending_log.h"
#include "meta/namespace.h"
#include "segment/data_log.h"
#include "segment/segment_table.h"
#include "util/failure_state.h"
#include "util/mutex.h"
#include "util/periodic_thread.h"

namespace ckptfs {

struct JournalStats {
  uint64_t commits = 0;
  uint64_t compactions = 0;
  uint64_t metadata_device_bytes = 0;
};

class Journal {
 public:
  // Every pointer must outlive the journal.
  Journal(const MountOptions& options, BlockDevice* device, const Superblock& sb,
          SegmentTable* segments, DataLog* data);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Replays the log into the namespace and frees the inodes a crash left
  // with no name (read-only: leaves them; nothing can reach them). Called
  // once, before anything else.
  Status Recover() EXCLUDES(commit_mu_, mu_);
  // Starts the committer thread: a commit every commit_interval, and when
  // the pending records pass a few MiB. Read-only: starts nothing.
  void Start();
  // Stops the committer thread (commits nothing: Commit does).
  void Stop() { committer_.Stop(); }

  // The namespace lock. Hold it shared to read ns(), exclusively to change.
  SharedMutex* mu() const RETURN_CAPABILITY(mu_) { return &mu_; }
  const Namespace& ns() const REQUIRES_SHARED(mu_) { return ns_; }

  // Applies `r` (validated by the caller) and queues it for the log.
  Status Apply(const Record& r) REQUIRES(mu_);
  uint64_t AllocateIno() REQUIRES(mu_) { return ns_.AllocateIno(); }
  // A write of a compressing file: `in_memory` maps the range to the
  // pending run `key` now, and the place of its record in the log is held
  // until Fill. Commits stop at that place until then.
  Status Reserve(uint64_t key, const record::WriteExtent& in_memory) REQUIRES(mu_);
  // The run `key` is stored at `stored`: fills its place with the write as
  // it happened, and re-points what still maps `pending` (the run's pending
  // address) at the stored copy.
  Status Fill(uint64_t key, const record::WriteExtent& as_written, uint64_t pending_addr)
      REQUIRES(mu_);
  // Empties the place reserved for `key` (the run was never mapped).
  void Unreserve(uint64_t key) REQUIRES(mu_);

  // Commits what is pending unless a commit already covered it (group
  // commit). Does not wait for compressors: fsync does that first.
  // Read-only: nothing is ever pending, and both return OK at once.
  Status CommitNow() EXCLUDES(commit_mu_, mu_);
  // Commits whatever is pending (unmount).
  Status Commit() EXCLUDES(commit_mu_, mu_);

  // ReadOnly on a store opened read-only; the first failure's IOError once
  // the store takes no more changes after it; else OK.
  Status CheckWritable() const;
  // Records `s` as the store's failure (if it is the first) and returns it.
  Status Fail(const Status& s);

  JournalStats stats() const;

  // The committed log as of the last commit, for a copy of the store
  // (CommittedImages): calls `fn` with the superblock naming the log's head,
  // the chain's segments (head first), where the next block goes and
  // committed_lsn(). `fn` runs under the commit lock, so no commit changes
  // any of it meanwhile; it must not commit.
  using CommittedLogFn = std::function<void(const Superblock& head, const std::vector<uint32_t>& chain,
                                            const LogPosition& end, uint64_t committed_lsn)>;
  void WithCommittedLog(const CommittedLogFn& fn) EXCLUDES(commit_mu_, mu_);
  // The lsn of the last log block committed: it grows with every commit
  // that logs anything, and across remounts and compactions (the chain
  // continues the lsn sequence), so it orders commits for good.
  uint64_t committed_lsn() const { return committed_lsn_.load(); }

 private:
  Status CommitLocked() REQUIRES(commit_mu_) EXCLUDES(mu_);
  // Rewrites the log as a snapshot of the namespace in a new chain and
  // switches the superblock to it.
  Status CompactLogLocked() REQUIRES(commit_mu_) EXCLUDES(mu_);
  bool LogNeedsCompaction() const REQUIRES(commit_mu_);
  // Appends `batch` to the chain and flushes the device.
  Status AppendToLogLocked(const std::string& batch) REQUIRES(commit_mu_);
  // Records up to `seq` are durable: their dead segments may be reused.
  void MarkDurable(uint64_t seq) REQUIRES(commit_mu_);
  // A writer for a chain whose segments are recorded in `*chain`.
  std::unique_ptr<LogWriter> MakeLogWriter(LogPosition at, std::vector<uint32_t>* chain);

  const MountOptions options_;
  BlockDevice* const device_;
  const Superblock sb_;  // geometry and store id: never change
  SegmentTable* const segments_;
  DataLog* const data_;
  FailureState failure_;  // the first failed commit or placement: read-only after it

  Mutex commit_mu_ ACQUIRED_BEFORE(mu_);
  Superblock head_sb_ GUARDED_BY(commit_mu_);  // as last written (log head, generation)
  // Null when read-only (or when Recover failed): there is no log to write.
  std::unique_ptr<LogWriter> log_writer_ GUARDED_BY(commit_mu_);
  std::vector<uint32_t> log_segments_ GUARDED_BY(commit_mu_);  // the chain, head first
  uint64_t log_bytes_at_open_ GUARDED_BY(commit_mu_) = 0;  // chain bytes before log_writer_
  uint64_t last_snapshot_bytes_ GUARDED_BY(commit_mu_) = 0;

  mutable SharedMutex mu_;
  Namespace ns_ GUARDED_BY(mu_);
  PendingLog pending_log_ GUARDED_BY(mu_);  // records not yet committed
  std::atomic<uint64_t> durable_seq_{0};    // the last record committed
  std::atomic<uint64_t> committed_lsn_{0};  // the last log block committed

  PeriodicThread committer_;  // woken early when enough is pending

  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> compactions_{0};
  std::atomic<uint64_t> metadata_bytes_{0};
};

}  // namespace ckptfs
