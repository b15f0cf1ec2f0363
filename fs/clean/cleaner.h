// Cleaner: makes room. It moves the live data out of partly dead segments
// so they can be reused, in the background when free space runs low and in
// the foreground when a write would otherwise fail (AppendMakingRoom); with
// compress_when=idle it also rewrites raw data of compressing files
// compressed once the mount is idle.
//
// A move copies one mapped range to the cleaner's stream and re-points the
// file at the copy (Journal::Apply) only if the range still maps the same
// stored bytes when the copy is done: a user write in between wins, and the
// copy dies. The cleaner owns its pass lock, its thread and its figures;
// the namespace is the journal's, the segments the segment table's.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "ckptfs/options.h"
#include "compress/compression_policies.h"
#include "compress/encoder_tally.h"
#include "clean/evictor.h"
#include "journal/journal.h"
#include "segment/data_log.h"
#include "segment/segment_table.h"
#include "util/mutex.h"
#include "util/periodic_thread.h"

namespace ckptfs {

struct CleanResult {
  size_t segments = 0;  // victims emptied (free after the commit the pass makes)
  uint64_t moved = 0;   // stored bytes copied out of them
};

struct CleanerStats {
  uint64_t bytes_moved = 0;
  uint64_t segments = 0;
};

class Cleaner {
 public:
  // The longest a user write into a full store waits for its tier to hold
  // enough to evict before it fails with ENOSPC: long enough for a drain
  // that keeps up with the device, short of hanging on one that is stuck.
  static constexpr std::chrono::seconds kWaitForTier{60};

  // Every pointer must outlive the cleaner. `user_bytes_written` tells it
  // whether users are writing (it stays out of their way). `evictor`, null
  // for a store with no tier, gives published segments up to the tier
  // instead of copying live data: when space runs low it goes first.
  Cleaner(const MountOptions& options, const Superblock& sb, Journal* journal, DataLog* data,
          SegmentTable* segments, CompressionPolicies* policies, EncoderTally* tally,
          const std::atomic<uint64_t>* user_bytes_written, Evictor* evictor);
  ~Cleaner();

  void Start();
  void Stop() { thread_.Stop(); }

  // Appends to the user stream (`placing_promised`: a write room was
  // promised to, DataLog::Append); when the store is full, commits (dead
  // segments become free only then) and cleans until the bytes fit or
  // nothing is left to clean (NoSpace: the live data fills the store).
  Result<DataLog::Ticket> AppendMakingRoom(const char* data, size_t len, RunCoding coding,
                                           bool placing_promised);
  // One round of making room: gives up segments the tier holds (copying
  // nothing) or, with none to give, cleans; what it freed. For callers
  // that need free segments rather than one append (fallocate's promise).
  struct Freed {
    size_t evicted = 0;
    size_t cleaned = 0;
  };
  Result<Freed> MakeRoomOnce();
  // Empties up to `max_victims` segments, the emptiest and coldest first.
  Result<CleanResult> CleanOnce(size_t max_victims) EXCLUDES(pass_mu_);
  // Gives up to `max_victims` segments the tier holds to it (Evictor); the
  // number given up, 0 with no tier attached.
  Result<size_t> EvictOnce(size_t max_victims) EXCLUDES(pass_mu_);

  CleanerStats stats() const;

 private:
  struct Move;
  // compress_when=idle: rewrites up to `max_victims` segments holding
  // mostly raw data of compressing files, compressing it on the way.
  Result<CleanResult> RecompressOnce(size_t max_victims) EXCLUDES(pass_mu_);
  // Moves every live byte out of `victims` to the cleaner's stream (with
  // `recompress`, raw data of compressing files is compressed) and commits.
  Result<CleanResult> Evacuate(const std::vector<uint32_t>& victims, bool recompress)
      REQUIRES(pass_mu_);
  // Bytes the cleaner may write now: free segments beyond the metadata
  // reserve and the room promised to queued writes, plus its open buffer.
  uint64_t Room() const;
  // What the background thread remembers between ticks: compress_when=idle
  // rewrites raw data compressed once no user byte was written for a
  // second, until a pass finds nothing or writes resume. Held by the
  // thread's own closure (Start), so no other thread can reach it.
  struct IdleWatch {
    uint64_t last_written = 0;
    int idle_ticks = 0;
    bool recompressed_all = false;
  };
  // One look, every 100 ms, at whether to clean or recompress.
  void Tick(IdleWatch* idle);

  const MountOptions options_;
  const Superblock sb_;
  Journal* const journal_;
  DataLog* const data_;
  SegmentTable* const segments_;
  CompressionPolicies* const policies_;
  EncoderTally* const tally_;
  const std::atomic<uint64_t>* const user_bytes_written_;
  Evictor* const evictor_;

  Mutex pass_mu_;  // one pass at a time (background, or a writer making room)

  PeriodicThread thread_;

  std::atomic<uint64_t> bytes_moved_{0};
  std::atomic<uint64_t> segments_cleaned_{0};
};

}  // namespace ckptfs
