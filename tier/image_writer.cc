// ImageWriter: see image_writer.h.
#include "image_writer.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "image_manifest.h"

namespace ckptfs {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

}  // namespace

std::string ImageWriter::LockCookie(uint64_t store_id) {
  char cookie[32];
  std::snprintf(cookie, sizeof cookie, "store-%016" PRIx64, store_id);
  return cookie;
}

Result<std::unique_ptr<ImageWriter>> ImageWriter::Lock(std::unique_ptr<RadosImage> image, uint64_t store_id) {
  const std::string name = image->target().ToString();
  const std::string cookie = LockCookie(store_id);
  const std::string description = "ckptfs drain of store " + cookie + " on " + HostName();
  Status locked = image->Lock(ImageManifest::kLockObject, ImageManifest::kLockName, cookie, description);
  if (locked.IsBusy()) {
    // Held under our own cookie: by an earlier daemon of this very store,
    // which is dead, since this process holds the store's flock. Anyone
    // else is another writer.
    CKPTFS_ASSIGN_OR_RETURN(auto lockers, image->Lockers(ImageManifest::kLockObject, ImageManifest::kLockName));
    std::string holders;
    bool ours = !lockers.empty();
    for (const auto& l : lockers) {
      holders += (holders.empty() ? "" : ", ") + l.client + " at " + l.address + " (" + l.cookie + ")";
      ours = ours && l.cookie == cookie;
    }
    if (!ours) {
      return Status::Busy(name + " has another writer: " + holders +
                          ". If that writer is dead, `ckptfs-tier takeover " + name +
                          "` breaks its lock.");
    }
    for (const auto& l : lockers) {
      // The flock proves the holder dead only where it is one host's lock
      // (a local disk); a store on shared storage may have a predecessor
      // that is only hung, elsewhere. So it is fenced first, as a takeover
      // does, where this client may.
      Status fenced = image->Fence(l);
      if (fenced.code() == Status::Code::kPermission) {
        spdlog::warn("{}: not fencing the earlier daemon of this store: {}", name, fenced.ToString());
      } else {
        CKPTFS_RETURN_IF_ERROR(fenced);
      }
      CKPTFS_RETURN_IF_ERROR(image->BreakLock(ImageManifest::kLockObject, ImageManifest::kLockName, l));
    }
    spdlog::info("{}: took over the writer lock of an earlier daemon of this store ({})", name, holders);
    locked = image->Lock(ImageManifest::kLockObject, ImageManifest::kLockName, cookie, description);
  }
  CKPTFS_RETURN_IF_ERROR(locked);
  std::string owner = cookie + "/" + image->ClientName();
  return std::unique_ptr<ImageWriter>(new ImageWriter(std::move(image), store_id, std::move(owner)));
}

ImageWriter::ImageWriter(std::unique_ptr<RadosImage> image, uint64_t store_id, std::string owner)
    : image_(std::move(image)), store_id_(store_id), owner_(std::move(owner)) {}

ImageWriter::~ImageWriter() { Release(); }

Status ImageWriter::Claim() {
  CKPTFS_RETURN_IF_ERROR(image_->Claim(ImageManifest::kObject, ImageManifest::kOwnerXattr, owner_));
  claim_checked_at_ = std::chrono::steady_clock::now();
  return Status::Ok();
}

Status ImageWriter::CheckClaim() {
  CKPTFS_RETURN_IF_ERROR(image_->CheckOwner(ImageManifest::kObject, ImageManifest::kOwnerXattr, owner_));
  claim_checked_at_ = std::chrono::steady_clock::now();
  return Status::Ok();
}

Status ImageWriter::CheckClaimEvery(std::chrono::milliseconds every) {
  if (std::chrono::steady_clock::now() - claim_checked_at_ < every) return Status::Ok();
  return CheckClaim();
}

void ImageWriter::Release() {
  if (released_) return;
  released_ = true;
  if (image_->Fenced()) return;  // the lock is not ours any more, nor is any call
  Status s = image_->Unlock(ImageManifest::kLockObject, ImageManifest::kLockName, LockCookie(store_id_));
  if (!s.ok()) spdlog::warn("{}: releasing the writer lock: {}", name(), s.ToString());
}

}  // namespace ckptfs
