// TierAttachment: the daemon's end of the RADOS tier (-o tier=rados:POOL/NAME).
//
// librados runs threads, and the daemon forks (fuse_daemonize) after opening
// the store, so the tier is attached twice: Check, before the fork, connects
// and takes the image's writer lock, so that an unreachable cluster, a
// missing pool, another writer or another store's image stops the mount
// with a message on the terminal; it then lets go. Start, after the fork,
// connects again, runs the Drainer and attaches it to the store as its
// RemoteTier (the device becomes a cache of the image). That second connect
// can fail where the first succeeded (the cluster went away in between):
// a drain's is then retried in the background, with backoff, while the
// failure may pass (an I/O error or timeout, a lock held), and the stats
// say why the drain has not begun, rather than the mount never draining.
// Finish, at unmount, gives the drain a bounded time to send the last
// commit (what it cannot send, the next mount of the store sends: nothing
// is lost locally).
//
// A read-only mount drains nothing: with -o tier= it only reads the runs
// the store evicted to the image (EvictedRunReader). CheckReader checks the
// image is this store's; Start connects again and attaches the reader, with
// the same background retries when that connect fails: until it succeeds,
// reads of evicted runs fail and say the tier is not attached.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "ckptfs/filesystem.h"
#include "drain_stats.h"
#include "drainer.h"
#include "evicted_run_reader.h"
#include "rados_target.h"
#include "util/mutex.h"

namespace ckptfs {

class TierAttachment {
 public:
  static Result<std::unique_ptr<TierAttachment>> Check(const RadosTarget& target, const DrainOptions& options,
                                                       FileSystem* fs);
  // For a read-only mount: reads of evicted runs only.
  static Result<std::unique_ptr<TierAttachment>> CheckReader(const RadosTarget& target, FileSystem* fs);
  ~TierAttachment();

  // Connects again (after the fork) and starts draining, or reading. A
  // connect that fails now is retried in the background until it succeeds
  // or Finish: the error is returned (to log) and, a drain's, kept in Stats.
  Status Start() EXCLUDES(mu_);
  // After the store's last commit: drains until RADOS holds it or `timeout`
  // passes, then stops and releases the lock. A connect the retrier has in
  // progress is waited for first: each of its RADOS calls (connect, lock,
  // manifest read) is bounded by the RADOS timeout, not by `timeout`.
  Status Finish(std::chrono::milliseconds timeout) EXCLUDES(mu_);
  // The drain's figures; before it has connected, the store's commit, the
  // failed connects (errors, retries) and why.
  std::optional<DrainStats> Stats() const EXCLUDES(mu_);

 private:
  TierAttachment(const RadosTarget& target, const DrainOptions& options, FileSystem* fs,
                 CommittedImageSource* source, uint64_t store_id)
      : target_(target), options_(options), fs_(fs), source_(source), store_id_(store_id) {}
  Result<std::unique_ptr<Drainer>> Connect() const;
  // Connects, starts the drain (or opens the reader) and attaches it; false
  // (the error kept) when the connect failed.
  bool TryToAttach() EXCLUDES(mu_);
  Status AttachDrainer() EXCLUDES(mu_);
  Status AttachReader() EXCLUDES(mu_);
  // The background retries of TryToAttach, until one succeeds, fails for
  // good, or Finish.
  void RetryAttach() EXCLUDES(mu_);
  // Tells the retrier to stop and joins it (a connect in progress ends
  // first); from then on nothing but the caller sets drainer_ or reader_.
  void EndRetries() EXCLUDES(mu_);

  const RadosTarget target_;
  const DrainOptions options_;
  FileSystem* const fs_;
  CommittedImageSource* const source_;  // null: a reader's, which drains nothing
  const uint64_t store_id_;

  // The FUSE threads read Stats while the retrier may set drainer_.
  mutable Mutex mu_;
  CondVar finishing_changed_;
  bool finishing_ GUARDED_BY(mu_) = false;
  std::unique_ptr<Drainer> drainer_ GUARDED_BY(mu_);  // once connected
  std::unique_ptr<EvictedRunReader> reader_ GUARDED_BY(mu_);  // instead, when source_ is null
  uint64_t failed_connects_ GUARDED_BY(mu_) = 0;
  std::string connect_error_ GUARDED_BY(mu_);  // the last failed connect's
  bool gave_up_ GUARDED_BY(mu_) = false;  // that failure will not pass by itself
  std::thread retrier_;  // runs RetryAttach; joined by Finish and the destructor
};

}  // namespace ckptfs
