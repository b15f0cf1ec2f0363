// PublishedView: what the last published image holds, as the store's
// threads see it through RemoteTier (include/ckptfs/remote_tier.h): which
// segment incarnations the image holds, so the store may evict them, and
// reads of the objects of runs it evicted. The drain's cycle shows each
// image it publishes here (Show); any thread reads.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>

#include "ckptfs/committed_image.h"
#include "ckptfs/remote_tier.h"
#include "image_manifest.h"
#include "rados_image.h"
#include "util/mutex.h"

namespace ckptfs {

class PublishedView {
 public:
  explicit PublishedView(RadosImage* image) : image_(image) {}

  // Shows `published`, whose segments held the incarnations `image` names
  // (null: not known, as for a manifest read at open: then nothing is
  // evictable until the next publication, but evicted runs read).
  void Show(const ImageManifest& published, const CommittedImage* image) EXCLUDES(mu_);
  // Wakes the waiters for a newer image: none will come (the writer was
  // fenced).
  void Abandon() EXCLUDES(mu_);

  // Where the image holds `segment` as `incarnation`, if it does and this
  // client can still read it.
  std::optional<RemoteSegment> Published(uint32_t segment, uint64_t incarnation) EXCLUDES(mu_);
  // Reads an evicted run's bytes from `object`; past the object's end, zeros.
  Status ReadRemote(uint64_t object, uint64_t offset, void* buf, size_t len) EXCLUDES(mu_);
  // How many images were shown so far.
  uint64_t Seq() EXCLUDES(mu_);
  // Waits until more than `seen` were, or `timeout` passes, or no image
  // will come; whether one came.
  bool WaitForNewer(uint64_t seen, std::chrono::milliseconds timeout) EXCLUDES(mu_);

 private:
  struct HeldSegment {
    uint64_t incarnation = 0;
    RemoteSegment where;
  };

  RadosImage* const image_;
  Mutex mu_;
  std::map<uint32_t, HeldSegment> segments_ GUARDED_BY(mu_);
  std::map<uint64_t, uint32_t> objects_ GUARDED_BY(mu_);  // object -> its segment
  uint64_t seq_ GUARDED_BY(mu_) = 0;  // images shown so far
  CondVar changed_;  // seq_ grew, or no image will come
};

}  // namespace ckptfs
