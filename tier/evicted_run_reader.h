// EvictedRunReader: the RemoteTier of a read-only mount of a local store,
// `-o ro,tier=rados:POOL/NAME`: reads of the runs the store evicted to that
// image go to the image's objects. Nothing is drained, published or evicted
// and no lock is taken: the store's own lock keeps its writer away, and the
// image's writer only ever adds objects and keeps every one that the store's
// committed state points at (include/ckptfs/remote_tier.h).
//
// The image's manifest is read once, at Open, and names the objects; a run
// read from the wrong image of the same store fails its checksum, never
// returns another run's bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "ckptfs/remote_tier.h"
#include "rados_image_device.h"
#include "rados_target.h"

namespace ckptfs {

class EvictedRunReader : public RemoteTier {
 public:
  // Connects and reads the image's manifest. NotFound when nothing was
  // drained there, Invalid when the image belongs to another store than
  // `store_id`.
  static Result<std::unique_ptr<EvictedRunReader>> Open(const RadosTarget& target, uint64_t store_id);

  // Nothing is evicted by a read-only mount.
  std::optional<RemoteSegment> Published(uint32_t, uint64_t) override { return std::nullopt; }
  Status ReadRemote(uint64_t object, uint64_t offset, void* buf, size_t len) override;
  uint64_t ImageSeq() override { return 0; }
  bool WaitForNewerImage(uint64_t, std::chrono::milliseconds) override { return false; }

 private:
  explicit EvictedRunReader(std::unique_ptr<RadosImageDevice> image) : image_(std::move(image)) {}

  // Serves remote addresses from the objects its manifest names.
  const std::unique_ptr<RadosImageDevice> image_;
};

}  // namespace ckptfs
