// DrainProgress: the drain's figures (DrainStats) as its cycle notes them
// and any thread reads them (ckptfs-stat, `ckptfs-tier wait`): how far the
// image is behind the store, what was sent, adopted, published, removed,
// and the errors.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "ckptfs/committed_image.h"
#include "ckptfs/status.h"
#include "drain_stats.h"
#include "image_manifest.h"
#include "util/mutex.h"

namespace ckptfs {

class DrainProgress {
 public:
  explicit DrainProgress(std::string target);

  // A cycle begins with the store at `committed_lsn`; `adopted`: the image's
  // earlier contents were checked. Starts the clock of behind_ms when the
  // image fell behind just now.
  void CycleBegins(uint64_t committed_lsn, bool adopted) EXCLUDES(mu_);
  void NoteError(const Status& s) EXCLUDES(mu_);
  void NoteRetry() EXCLUDES(mu_);
  void SetBehindBytes(uint64_t bytes) EXCLUDES(mu_);
  void NoteUploaded(uint64_t bytes) EXCLUDES(mu_);
  // Time a cycle spent sending (DrainStats::sending_ms).
  void AddSending(std::chrono::steady_clock::duration d) EXCLUDES(mu_);
  void NoteAdopted(uint64_t bytes) EXCLUDES(mu_);
  void NoteDeferred(std::chrono::steady_clock::duration d) EXCLUDES(mu_);
  void NoteRemoved(uint64_t objects) EXCLUDES(mu_);
  void SetHeldSendBuffers(uint64_t buffers) EXCLUDES(mu_);
  // The image found at open, published by an earlier writer.
  void NoteResumed(const ImageManifest& published) EXCLUDES(mu_);
  // An image published by this writer, the store then at `committed_lsn`.
  void NotePublished(const ImageManifest& published, uint64_t committed_lsn) EXCLUDES(mu_);

  // The figures, with the store's commit read under the same lock as they
  // are, so that none shows a drained commit newer than the store's.
  DrainStats Snapshot(const CommittedImageSource& source, bool fenced) const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  DrainStats stats_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point behind_since_ GUARDED_BY(mu_);
  std::chrono::steady_clock::duration sending_ GUARDED_BY(mu_){0};  // stats_.sending_ms, unrounded
  bool behind_ GUARDED_BY(mu_) = false;
};

}  // namespace ckptfs
