// Drainer: see drainer.h.
#include "drainer.h"

#include <spdlog/spdlog.h>

#include <cinttypes>
#include <cstdio>
#include <thread>

#include "published_manifest.h"

namespace ckptfs {

Result<std::unique_ptr<Drainer>> Drainer::Open(std::unique_ptr<RadosImage> image,
                                               CommittedImageSource* source, uint64_t store_id,
                                               const DrainOptions& options) {
  // From here on a failure to open releases the lock (~ImageWriter).
  CKPTFS_ASSIGN_OR_RETURN(std::unique_ptr<ImageWriter> writer, ImageWriter::Lock(std::move(image), store_id));
  const std::string name = writer->name();
  auto another_store = [&](uint64_t theirs) {
    char id[32];
    std::snprintf(id, sizeof id, "%016" PRIx64, theirs);
    return Status::Invalid(name + " holds the image of another store (" + id + ", this one is " +
                           LockCookie(store_id).substr(6) + "): give each store its own image name");
  };
  // Another store's image is refused before it is claimed: a writer of
  // that store whose lock was broken while it was only hung keeps it.
  auto before_claim = ReadPublishedManifest(writer->image());
  if (before_claim.ok() && before_claim->store_id != store_id) return another_store(before_claim->store_id);
  if (!before_claim.ok() && !before_claim.status().IsNotFound()) return before_claim.status();
  // The manifest is read again after the claim, so that no publication of
  // the old writer's can come after the read that counts.
  CKPTFS_RETURN_IF_ERROR(writer->Claim());
  auto decoded = ReadPublishedManifest(writer->image());
  if (!decoded.ok() && !decoded.status().IsNotFound()) return decoded.status();
  if (decoded.ok() && decoded->store_id != store_id) return another_store(decoded->store_id);

  std::unique_ptr<Drainer> d(new Drainer(std::move(writer), source, options));
  MutexLock lock(&d->cycle_mu_);
  if (decoded.ok()) {
    d->plan_.Resume(std::move(*decoded));
    // Runs evicted by an earlier daemon are read from the start.
    d->view_.Show(d->plan_.published(), nullptr);
    d->progress_.NoteResumed(d->plan_.published());
  }
  // Runs the store evicted live in the image it evicted them to: any other
  // image (a new one, or another of this store's) lacks their objects, or
  // holds others under the same ids.
  CKPTFS_ASSIGN_OR_RETURN(CommittedImage committed, source->CaptureCommitted());
  for (uint64_t object : committed.remote_objects) {
    if (d->plan_.published().FindObject(object) == nullptr) {
      return Status::Invalid("the store has runs evicted to a RADOS image that " + name + " is not (" + name +
                             " holds no object " + std::to_string(object) +
                             "): mount it with the -o tier= it was drained to");
    }
  }
  return d;
}

Drainer::Drainer(std::unique_ptr<ImageWriter> writer, CommittedImageSource* source, const DrainOptions& options)
    : source_(source), options_(options), image_(writer->image()), writer_(std::move(writer)),
      plan_(writer_.get(), source, options.gc_delay),
      uploader_(source, &plan_, writer_.get(), &progress_, &send_deadline_, options.max_in_flight,
                options.reads_ahead),
      deferral_(options.busy_bytes_per_second, options.max_deferral),
      backoff_(std::chrono::milliseconds(200), options.max_backoff), view_(image_),
      progress_(image_->target().ToString()) {}

Drainer::~Drainer() { Stop(); }

void Drainer::Start() {
  thread_.Start(options_.interval, [this] { Tick(); });
  thread_.Wake();  // the first cycle at once: a new mount may have a whole store to send
}

void Drainer::Stop() {
  // A cycle the thread is in starts no more writes, so the join below
  // waits for the writes in flight, not for all the drain is behind.
  send_deadline_.store(std::numeric_limits<int64_t>::min());
  thread_.Stop();
  MutexLock lock(&cycle_mu_);
  writer_->Release();
}

void Drainer::Tick() {
  MutexLock lock(&cycle_mu_);
  // Fenced by a takeover: the image is another writer's now, and no call
  // of this client will ever succeed again.
  if (image_->Fenced()) return;
  if (deferral_.Defer(*source_, &progress_)) return;
  if (!backoff_.Ready()) return;
  Status s = CycleLocked();
  if (s.ok()) {
    backoff_.Succeeded();
    return;
  }
  progress_.NoteError(s);
  if (image_->Fenced()) {
    spdlog::error("{}: {}; this mount drains and evicts no more, and runs it evicted earlier fail to read "
                  "(a new mount of the store drains again if the image is still its)",
                  writer_->name(), s.ToString());
    view_.Abandon();  // a full store's writer waits for an image no more
    return;
  }
  const std::chrono::milliseconds delay = backoff_.Failed();
  spdlog::warn("{}: drain cycle failed, retrying in {} ms: {}", writer_->name(), delay.count(), s.ToString());
}

Status Drainer::DrainUntil(uint64_t seq, std::chrono::milliseconds timeout) {
  if (seq == 0) seq = source_->CommittedLsn();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  send_deadline_.store(deadline.time_since_epoch().count());
  struct LiftDeadline {
    std::atomic<int64_t>* deadline;
    ~LiftDeadline() { deadline->store(std::numeric_limits<int64_t>::max()); }
  } lift{&send_deadline_};
  Status last;
  while (true) {
    {
      MutexLock lock(&cycle_mu_);
      auto holds = [&]() REQUIRES(cycle_mu_) {
        return plan_.published().publish_seq != 0 && plan_.published().commit_lsn >= seq;
      };
      if (holds()) return Status::Ok();
      if (image_->Fenced()) return Status::IOError(writer_->name() + ": fenced by a takeover");
      last = CycleLocked();
      if (!last.ok()) progress_.NoteError(last);
      if (holds()) return Status::Ok();
      if (image_->Fenced()) return last;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return last.ok() ? Status::Busy(image_->target().ToString() + " still behind the store after " +
                                      std::to_string(timeout.count()) + " ms")
                       : last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

Status Drainer::CycleLocked() {
  const uint64_t committed = source_->CommittedLsn();
  progress_.CycleBegins(committed, plan_.adopted());
  CKPTFS_ASSIGN_OR_RETURN(uint64_t removed, plan_.CollectGarbage());
  if (removed > 0) progress_.NoteRemoved(removed);
  if (plan_.Holds(committed)) {
    // Idle, it still looks now and then: a writer whose lock was broken
    // finds out, and stops offering the store evictions to an image that is
    // not its own any more.
    CKPTFS_RETURN_IF_ERROR(writer_->CheckClaimEvery(options_.idle_claim_check));
    return plan_.Scan();
  }

  CKPTFS_ASSIGN_OR_RETURN(CommittedImage image, source_->CaptureCommitted());
  if (!plan_.adopted()) {
    CKPTFS_ASSIGN_OR_RETURN(uint64_t adopted, plan_.Adopt(image));
    progress_.NoteAdopted(adopted);
  }
  // The drain's own clock starts after the adoption, which reads back what
  // the image holds (adopted_bytes) and sends nothing.
  const auto sending_start = std::chrono::steady_clock::now();
  uint64_t behind_bytes = 0;
  const std::vector<DrainPlan::Piece> pieces = plan_.PiecesToSend(image, options_.chunk_bytes, &behind_bytes);
  progress_.SetBehindBytes(behind_bytes);
  // Still the image's writer? Only then are the pieces worth sending: the
  // claim of a writer that took the image over ends this one here, not at
  // the publication after a whole cycle's writes.
  if (!pieces.empty()) CKPTFS_RETURN_IF_ERROR(writer_->CheckClaim());
  bool redo = false;
  Status sent = uploader_.Send(pieces, image.segment_size, &redo);
  if (sent.ok() && !redo) sent = PublishLocked(image);
  if (!pieces.empty()) progress_.AddSending(std::chrono::steady_clock::now() - sending_start);
  CKPTFS_RETURN_IF_ERROR(sent);
  if (redo) {
    // A segment this commit needs was handed out again while we copied it
    // (a newer commit will not need it), or an object id was taken: the
    // next cycle goes on from what arrived.
    progress_.NoteRetry();
    return Status::Ok();
  }
  return plan_.Scan();
}

Status Drainer::PublishLocked(const CommittedImage& image) {
  CKPTFS_ASSIGN_OR_RETURN(ImageManifest next, plan_.NextManifest(image));
  CKPTFS_RETURN_IF_ERROR(
      image_->WriteWholeIfOwner(ImageManifest::kObject, next.Encode(), ImageManifest::kOwnerXattr, writer_->owner()));
  plan_.Published(std::move(next));
  view_.Show(plan_.published(), &image);
  progress_.NotePublished(plan_.published(), source_->CommittedLsn());
  return Status::Ok();
}

DrainStats Drainer::Stats() const { return progress_.Snapshot(*source_, image_->Fenced()); }

}  // namespace ckptfs
