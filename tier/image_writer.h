// ImageWriter: this store's hold on its RADOS image as the image's one
// writer: the writer lock, the claim of the manifest, and the takeover of
// an earlier daemon of the same store (docs/design.md, "One writer").
//
// The lock keeps out writers that ask for it. Its cookie names the local
// store, so a daemon of the same store (whose previous daemon was killed:
// the local store's flock proves it dead) takes it over, fencing that
// daemon first where this client may; anyone else is refused. The claim
// also stops a writer whose lock was broken while it was only hung, once
// its fence lapses or where none was set: the drain checks the claim
// before a cycle sends, before it removes objects and with its publication,
// and each of its writes checks its object's own owner (owner()).
//
// Used by the drain's cycle only (Drainer::cycle_mu_), but for image(),
// Fenced() and name(), which any thread may call.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "ckptfs/status.h"
#include "rados_image.h"

namespace ckptfs {

class ImageWriter {
 public:
  // Takes the image's writer lock for store `store_id`, from an earlier
  // daemon of the same store if it holds it; Busy when another writer does.
  static Result<std::unique_ptr<ImageWriter>> Lock(std::unique_ptr<RadosImage> image, uint64_t store_id);
  // Releases the lock, if not released yet.
  ~ImageWriter();
  ImageWriter(const ImageWriter&) = delete;
  ImageWriter& operator=(const ImageWriter&) = delete;

  // Makes the manifest name this writer: from then on a writer that held
  // the image before publishes, writes and removes nothing in it.
  Status Claim();
  // Ok while the manifest still names this writer; else this client counts
  // itself fenced.
  Status CheckClaim();
  // CheckClaim, if the last check is older than `every`.
  Status CheckClaimEvery(std::chrono::milliseconds every);
  // Releases the lock unless this writer was fenced (then it is not its any
  // more). Final, and idempotent.
  void Release();

  RadosImage* image() const { return image_.get(); }
  // The token the manifest and this writer's objects name as their owner.
  const std::string& owner() const { return owner_; }
  bool Fenced() const { return image_->Fenced(); }
  std::string name() const { return image_->target().ToString(); }

  // The lock's cookie for store `store_id`.
  static std::string LockCookie(uint64_t store_id);

 private:
  ImageWriter(std::unique_ptr<RadosImage> image, uint64_t store_id, std::string owner);

  const std::unique_ptr<RadosImage> image_;
  const uint64_t store_id_;
  const std::string owner_;
  std::chrono::steady_clock::time_point claim_checked_at_;  // when the claim was last found this writer's
  bool released_ = false;
};

}  // namespace ckptfs
