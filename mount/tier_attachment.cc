// TierAttachment: see tier_attachment.h.
#include "tier_attachment.h"

#include <spdlog/spdlog.h>

#include "format/superblock.h"

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
  if (drainer_) source_->AttachTier(nullptr);
  if (reader_) fs_->ReadEvictedRunsFrom(nullptr);
}

Result<std::unique_ptr<Drainer>> TierAttachment::Connect() const {
  CKPTFS_ASSIGN_OR_RETURN(auto image, RadosImage::Open(target_));
  return Drainer::Open(std::move(image), source_, store_id_, options_);
}

Status TierAttachment::Start() {
  if (!source_) {
    CKPTFS_ASSIGN_OR_RETURN(reader_, EvictedRunReader::Open(target_, store_id_));
    fs_->ReadEvictedRunsFrom(reader_.get());
    spdlog::info("reading the runs the store evicted from {}", target_.ToString());
    return Status::Ok();
  }
  CKPTFS_ASSIGN_OR_RETURN(drainer_, Connect());
  drainer_->Start();
  // From now on the device is a cache of the image: runs evicted earlier
  // read from it, and published segments may be evicted.
  source_->AttachTier(drainer_.get());
  spdlog::info("draining to {}", target_.ToString());
  return Status::Ok();
}

Status TierAttachment::Finish(std::chrono::milliseconds timeout) {
  if (reader_) {
    fs_->ReadEvictedRunsFrom(nullptr);
    reader_.reset();
  }
  if (!drainer_) return Status::Ok();
  Status s = drainer_->DrainUntil(0, timeout);
  source_->AttachTier(nullptr);
  drainer_->Stop();
  if (s.ok()) {
    spdlog::info("{} holds the store's last commit", target_.ToString());
  } else {
    spdlog::warn("{} is behind the store at unmount ({}); the next mount of the store sends the rest",
                 target_.ToString(), s.ToString());
  }
  return s;
}

std::optional<DrainStats> TierAttachment::Stats() const {
  if (!drainer_) return std::nullopt;
  return drainer_->Stats();
}

}  // namespace ckptfs
