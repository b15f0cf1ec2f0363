// TierAttachment: see tier_attachment.h.
#include "tier_attachment.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "format/superblock.h"
#include "librados_image.h"
#include "util/backoff.h"

namespace ckptfs {

Result<std::unique_ptr<TierAttachment>> TierAttachment::Check(const RadosTarget& target,
                                                              const DrainOptions& options, FileSystem* fs) {
  CommittedImageSource* source = fs->committed_images();
  if (!source) return Status::Invalid("the store was opened without write tracking; a tier needs it");
  CKPTFS_ASSIGN_OR_RETURN(CommittedImage image, source->CaptureCommitted());
  std::unique_ptr<TierAttachment> t(new TierAttachment(target, options, fs, source, image.store_id));
  CKPTFS_ASSIGN_OR_RETURN(auto drainer, t->Connect());
  drainer->Stop();  // releases the lock: the daemon's child takes it again
  return t;
}

Result<std::unique_ptr<TierAttachment>> TierAttachment::CheckReader(const RadosTarget& target, FileSystem* fs) {
  const uint64_t store_id = fs->Stats().store_id;
  // Connected once to say now what is wrong; the child connects again.
  CKPTFS_RETURN_IF_ERROR(EvictedRunReader::Open(target, store_id).status());
  return std::unique_ptr<TierAttachment>(new TierAttachment(target, DrainOptions{}, fs, nullptr, store_id));
}

TierAttachment::~TierAttachment() {
  EndRetries();
  MutexLock lock(&mu_);
  if (drainer_) source_->AttachTier(nullptr);
  if (reader_) fs_->ReadEvictedRunsFrom(nullptr);
}

Result<std::unique_ptr<Drainer>> TierAttachment::Connect() const {
  CKPTFS_ASSIGN_OR_RETURN(auto image, LibradosImage::Open(target_));
  return Drainer::Open(std::move(image), source_, store_id_, options_);
}

Status TierAttachment::Start() {
  if (TryToAttach()) return Status::Ok();
  MutexLock lock(&mu_);
  if (gave_up_) return Status::IOError("connecting to " + target_.ToString() + " failed: " + connect_error_);
  retrier_ = std::thread([this] { RetryAttach(); });
  return Status::IOError("connecting to " + target_.ToString() + " failed (" + connect_error_ +
                         "); retrying in the background, the store serves meanwhile");
}

bool TierAttachment::TryToAttach() {
  // Outside mu_, as is all that follows but the bookkeeping: connecting
  // takes up to the RADOS timeout, and Stats must answer meanwhile. Finish
  // joins the retrier before it looks at drainer_ or reader_, so no two run
  // this, and a drain connected while the unmount waits is Finish's to use.
  const Status s = source_ ? AttachDrainer() : AttachReader();
  if (s.ok()) return true;
  MutexLock lock(&mu_);
  ++failed_connects_;
  connect_error_ = s.ToString();
  // Only what may pass is worth trying again: not another store's image, a
  // missing pool, or a client the cluster refuses.
  gave_up_ = !s.IsIOError() && !s.IsBusy();
  return false;
}

Status TierAttachment::AttachReader() {
  CKPTFS_ASSIGN_OR_RETURN(std::unique_ptr<EvictedRunReader> reader, EvictedRunReader::Open(target_, store_id_));
  fs_->ReadEvictedRunsFrom(reader.get());
  spdlog::info("reading the runs the store evicted from {}", target_.ToString());
  MutexLock lock(&mu_);
  reader_ = std::move(reader);
  return Status::Ok();
}

Status TierAttachment::AttachDrainer() {
  CKPTFS_ASSIGN_OR_RETURN(std::unique_ptr<Drainer> drainer, Connect());
  drainer->Start();
  // From now on the device is a cache of the image: runs evicted earlier
  // read from it, and published segments may be evicted.
  source_->AttachTier(drainer.get());
  spdlog::info("draining to {}", target_.ToString());
  MutexLock lock(&mu_);
  drainer_ = std::move(drainer);
  return Status::Ok();
}

void TierAttachment::RetryAttach() {
  Backoff backoff(std::chrono::milliseconds(500), options_.max_backoff);
  for (;;) {
    const std::chrono::milliseconds delay = backoff.Failed();
    {
      MutexLock lock(&mu_);
      const auto until = std::chrono::steady_clock::now() + delay;
      while (!finishing_ && std::chrono::steady_clock::now() < until) {
        finishing_changed_.WaitFor(&mu_, until - std::chrono::steady_clock::now());
      }
      if (finishing_) return;
    }
    if (TryToAttach()) return;
    MutexLock lock(&mu_);
    if (gave_up_) {
      spdlog::error("not {} {}: {}; retrying would not help, remount once it is fixed",
                    source_ ? "draining to" : "reading evicted runs from", target_.ToString(), connect_error_);
      return;
    }
    spdlog::warn("connecting to {} failed again ({}); retrying in {} ms", target_.ToString(), connect_error_,
                 backoff.next().count());
  }
}

void TierAttachment::EndRetries() {
  {
    MutexLock lock(&mu_);
    finishing_ = true;
    finishing_changed_.NotifyAll();
  }
  if (retrier_.joinable()) retrier_.join();
}

Status TierAttachment::Finish(std::chrono::milliseconds timeout) {
  EndRetries();
  // Nothing sets drainer_ or reader_ from here on: they are this thread's.
  Drainer* drainer = nullptr;
  std::unique_ptr<EvictedRunReader> reader;
  {
    MutexLock lock(&mu_);
    reader = std::move(reader_);
    drainer = drainer_.get();
    if (!drainer && !reader) {
      if (failed_connects_ == 0) return Status::Ok();
      if (!source_) return Status::IOError("never connected to " + target_.ToString() + ": " + connect_error_);
      spdlog::warn("{} never connected ({}); the next mount of the store sends what it lacks",
                   target_.ToString(), connect_error_);
      return Status::IOError("never connected to " + target_.ToString() + ": " + connect_error_);
    }
  }
  if (reader) {
    // Outside mu_: the detach waits for the remote reads in flight.
    fs_->ReadEvictedRunsFrom(nullptr);
    return Status::Ok();
  }
  Status s = drainer->DrainUntil(0, timeout);
  source_->AttachTier(nullptr);
  drainer->Stop();
  if (s.ok()) {
    spdlog::info("{} holds the store's last commit", target_.ToString());
  } else {
    spdlog::warn("{} is behind the store at unmount ({}); the next mount of the store sends the rest",
                 target_.ToString(), s.ToString());
  }
  return s;
}

std::optional<DrainStats> TierAttachment::Stats() const {
  MutexLock lock(&mu_);
  if (drainer_) return drainer_->Stats();
  if (!source_ || failed_connects_ == 0) return std::nullopt;
  DrainStats s;
  s.target = target_.ToString();
  s.committed_lsn = source_->CommittedLsn();
  s.errors = failed_connects_;
  s.retries = failed_connects_ - 1;
  s.last_error = "not connected: " + connect_error_;
  return s;
}

}  // namespace ckptfs
