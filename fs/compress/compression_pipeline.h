// CompressionPipeline: writes of compressing files, from the FUSE thread
// that hands one over to the compressor thread that stores it. Owns the
// pending runs (PendingRuns), the compressor threads and the room promised
// to queued runs.
//
// A write maps its range to a pending run, reserves the place of its record
// in the journal and returns: the FUSE thread never runs zstd. A compressor
// thread encodes the run, appends it to the data log and fills the reserved
// place (Journal::Fill). Commits stop at the first unfilled place, so the
// log stays a prefix of the operations in order; fsync first waits for
// every run written before it (WaitPlaced).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "ckptfs/options.h"
#include "compress/encoder_tally.h"
#include "compress/extent_codec.h"
#include "compress/pending_runs.h"
#include "journal/journal.h"
#include "segment/data_log.h"
#include "segment/segment_table.h"
#include "util/mutex.h"

namespace ckptfs {

class CompressionPipeline {
 public:
  // Appends an encoded run to the data log, making room if the store is
  // full (Cleaner::AppendMakingRoom).
  using Appender = std::function<Result<DataLog::Ticket>(const char* data, size_t len,
                                                         RunCoding coding)>;

  // Every pointer must outlive the pipeline.
  CompressionPipeline(const MountOptions& options, Journal* journal, SegmentTable* segments,
                      EncoderTally* tally, Appender append);
  ~CompressionPipeline();

  void Start() EXCLUDES(threads_mu_);
  // Places every queued run, then stops the threads (unmount).
  void Stop() EXCLUDES(threads_mu_);

  // Hands one write (at most one run) of a compressing file over. False
  // when it was not taken (not started, the compressors are behind and the
  // mount says not to wait, or no room can be promised): the caller stores
  // it raw at once.
  Result<bool> Submit(uint64_t ino, uint64_t offset, const char* data, size_t len,
                      const CompressionPolicy& policy);
  // Waits until every run submitted so far is placed.
  void WaitPlaced() { runs_.WaitPlaced(runs_.last_id()); }
  // The run a pending address stands for (reads of unplaced data).
  std::shared_ptr<const PendingRun> Find(uint64_t address) const { return runs_.Find(address); }
  PendingRunStats stats() const { return runs_.stats(); }

 private:
  // Encodes `run`, appends it and fills its place in the journal.
  Status Place(const PendingRun& run, ExtentEncoder* encoder);
  void CompressorLoop();

  const MountOptions options_;
  // The mtime a run's record sets: when it was written, or none where the
  // kernel owns the file's times (MountOptions::writes_set_mtime).
  int64_t MtimeOf(const PendingRun& run) const { return options_.writes_set_mtime ? run.time_ns : 0; }
  Journal* const journal_;
  SegmentTable* const segments_;
  EncoderTally* const tally_;
  const Appender append_;
  PendingRuns runs_;
  std::atomic<bool> running_{false};  // compressors run: writes may be queued

  Mutex threads_mu_;
  std::vector<std::thread> compressors_ GUARDED_BY(threads_mu_);
  bool stopped_ GUARDED_BY(threads_mu_) = false;
};

}  // namespace ckptfs
