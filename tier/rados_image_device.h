// RadosImageDevice: a read-only BlockDevice that serves a store's image in
// RADOS, so the ordinary mount code (replay, checksummed reads) opens a
// drained store on any node. The manifest is read once, at Open: the device
// shows that commit for as long as it is open, whatever the writer publishes
// later (objects a newer manifest drops stay in RADOS for the writer's
// grace period; see drainer.h).
//
// Reads of the superblock area return the image's superblock (for both
// copies), reads of a listed chunk come from its object, everything else is
// zeros: that is the device the manifest describes. A read is one RADOS read
// per stretch of adjacent chunks in an object, all issued in parallel.
#pragma once

#include <memory>

#include "image_manifest.h"
#include "io/block_device.h"
#include "rados_image.h"

namespace ckptfs {

class RadosImageDevice : public BlockDevice {
 public:
  // NotFound when the image has no manifest (never drained).
  static Result<std::unique_ptr<RadosImageDevice>> Open(std::unique_ptr<RadosImage> image);

  Status Read(uint64_t offset, void* buf, size_t len) override;
  Status Write(uint64_t offset, const void* buf, size_t len) override;
  Status Flush() override;
  uint64_t size() const override { return device_size_; }
  Status Provision(uint64_t offset, uint64_t len) override;

  const ImageManifest& manifest() const { return manifest_; }

 private:
  RadosImageDevice(std::unique_ptr<RadosImage> image, ImageManifest manifest, uint64_t data_start,
                   uint64_t segment_size, uint64_t device_size);
  Status ReadOnly() const;

  const std::unique_ptr<RadosImage> image_;
  const ImageManifest manifest_;
  const uint64_t data_start_;
  const uint64_t segment_size_;
  const uint64_t device_size_;
};

}  // namespace ckptfs
