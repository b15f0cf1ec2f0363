// TierAttachment: the daemon's end of the RADOS tier (-o tier=rados:POOL/NAME).
//
// librados runs threads, and the daemon forks (fuse_daemonize) after opening
// the store, so the tier is attached twice: Check, before the fork, connects
// and takes the image's writer lock, so that an unreachable cluster, a
// missing pool, another writer or another store's image stops the mount
// with a message on the terminal; it then lets go. Start, after the fork,
// connects again, runs the Drainer and attaches it to the store as its
// RemoteTier (the device becomes a cache of the image). Finish, at unmount, gives the drain
// a bounded time to send the last commit (what it cannot send, the next
// mount of the store sends: nothing is lost locally).
//
// A read-only mount drains nothing: with -o tier= it only reads the runs
// the store evicted to the image (EvictedRunReader). CheckReader checks the
// image is this store's; Start connects again and attaches the reader.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "ckptfs/filesystem.h"
#include "drain_stats.h"
#include "drainer.h"
#include "evicted_run_reader.h"
#include "rados_target.h"

namespace ckptfs {

class TierAttachment {
 public:
  static Result<std::unique_ptr<TierAttachment>> Check(const RadosTarget& target, const DrainOptions& options,
                                                       FileSystem* fs);
  // For a read-only mount: reads of evicted runs only.
  static Result<std::unique_ptr<TierAttachment>> CheckReader(const RadosTarget& target, FileSystem* fs);
  ~TierAttachment();

  // Connects again (after the fork) and starts draining, or reading.
  Status Start();
  // After the store's last commit: drains until RADOS holds it or `timeout`
  // passes, then stops and releases the lock.
  Status Finish(std::chrono::milliseconds timeout);
  std::optional<DrainStats> Stats() const;

 private:
  TierAttachment(const RadosTarget& target, const DrainOptions& options, FileSystem* fs,
                 CommittedImageSource* source, uint64_t store_id)
      : target_(target), options_(options), fs_(fs), source_(source), store_id_(store_id) {}
  Result<std::unique_ptr<Drainer>> Connect() const;

  const RadosTarget target_;
  const DrainOptions options_;
  FileSystem* const fs_;
  CommittedImageSource* const source_;  // null: a reader's, which drains nothing
  const uint64_t store_id_;
  std::unique_ptr<Drainer> drainer_;  // set by Start; the FUSE threads read Stats
  std::unique_ptr<EvictedRunReader> reader_;  // set by Start when source_ is null
};

}  // namespace ckptfs
