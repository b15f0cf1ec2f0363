// DrainProgress: see drain_progress.h.
#include "drain_progress.h"

#include <algorithm>
#include <utility>

namespace ckptfs {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

DrainProgress::DrainProgress(std::string target) {
  MutexLock lock(&mu_);
  stats_.target = std::move(target);
}

void DrainProgress::CycleBegins(uint64_t committed_lsn, bool adopted) {
  MutexLock lock(&mu_);
  const bool behind = !stats_.published || stats_.drained_lsn < committed_lsn || !adopted;
  if (behind && !behind_) behind_since_ = steady_clock::now();
  behind_ = behind;
}

void DrainProgress::NoteError(const Status& s) {
  MutexLock lock(&mu_);
  ++stats_.errors;
  ++stats_.retries;
  stats_.last_error = s.ToString();
}

void DrainProgress::NoteRetry() {
  MutexLock lock(&mu_);
  ++stats_.retries;
}

void DrainProgress::SetBehindBytes(uint64_t bytes) {
  MutexLock lock(&mu_);
  stats_.behind_bytes = bytes;
}

void DrainProgress::NoteUploaded(uint64_t bytes) {
  MutexLock lock(&mu_);
  stats_.uploaded_bytes += bytes;
  stats_.behind_bytes -= std::min(stats_.behind_bytes, bytes);
}

void DrainProgress::AddSending(steady_clock::duration d) {
  MutexLock lock(&mu_);
  sending_ += d;
  stats_.sending_ms = duration_cast<milliseconds>(sending_).count();
}

void DrainProgress::NoteAdopted(uint64_t bytes) {
  MutexLock lock(&mu_);
  stats_.adopted_bytes += bytes;
}

void DrainProgress::NoteDeferred(steady_clock::duration d) {
  MutexLock lock(&mu_);
  stats_.deferred_ms += duration_cast<milliseconds>(d).count();
}

void DrainProgress::NoteRemoved(uint64_t objects) {
  MutexLock lock(&mu_);
  stats_.objects_removed += objects;
}

void DrainProgress::SetHeldSendBuffers(uint64_t buffers) {
  MutexLock lock(&mu_);
  stats_.held_send_buffers = buffers;
}

void DrainProgress::NoteResumed(const ImageManifest& published) {
  MutexLock lock(&mu_);
  stats_.published = true;
  stats_.drained_lsn = published.commit_lsn;
  stats_.image_bytes = published.StoredBytes();
}

void DrainProgress::NotePublished(const ImageManifest& published, uint64_t committed_lsn) {
  MutexLock lock(&mu_);
  stats_.published = true;
  stats_.drained_lsn = published.commit_lsn;
  stats_.image_bytes = published.StoredBytes();
  ++stats_.manifests_published;
  stats_.last_error.clear();
  if (stats_.drained_lsn >= committed_lsn) behind_ = false;
}

DrainStats DrainProgress::Snapshot(const CommittedImageSource& source, bool fenced) const {
  MutexLock lock(&mu_);
  DrainStats s = stats_;
  // Live, so that a caller who just committed sees its own commit counted.
  s.committed_lsn = source.CommittedLsn();
  s.fenced = fenced;
  const bool behind = !s.published || s.drained_lsn < s.committed_lsn;
  s.behind_ms = behind && behind_ ? duration_cast<milliseconds>(steady_clock::now() - behind_since_).count() : 0;
  if (!behind) s.behind_bytes = 0;
  return s;
}

}  // namespace ckptfs
