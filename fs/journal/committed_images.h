// CommittedImages: the CommittedImageSource of a store opened with
// MountOptions::track_committed_images. It owns nothing but pointers: the
// journal says what the log is at the last commit, the segment table which
// data segments and tier objects that commit may point into, the
// write-tracking device which bytes of each segment were written in which
// incarnation, and the routing device where the tier is attached.
#pragma once

#include <atomic>

#include "ckptfs/committed_image.h"
#include "io/tier_routing_device.h"
#include "io/write_tracking_device.h"
#include "journal/journal.h"
#include "segment/segment_table.h"

namespace ckptfs {

class CommittedImages : public CommittedImageSource {
 public:
  // Every pointer must outlive this object.
  CommittedImages(Journal* journal, SegmentTable* segments, WriteTrackingDevice* device,
                  TierRoutingDevice* routing, const std::atomic<uint64_t>* bytes_written)
      : journal_(journal),
        segments_(segments),
        device_(device),
        routing_(routing),
        bytes_written_(bytes_written) {}

  Result<CommittedImage> CaptureCommitted() override;
  uint64_t CommittedLsn() const override { return journal_->committed_lsn(); }
  uint64_t BytesWritten() const override { return bytes_written_->load(); }
  bool SpaceIsLow() const override { return segments_->SpaceIsLow(); }
  Result<bool> ReadSegment(uint32_t segment, uint64_t incarnation, uint64_t offset, void* buf,
                           size_t len) override {
    return device_->ReadIfUnchanged(segment, incarnation, offset, buf, len);
  }
  void AttachTier(RemoteTier* tier) override { routing_->Attach(tier); }

 private:
  Journal* const journal_;
  SegmentTable* const segments_;
  WriteTrackingDevice* const device_;
  TierRoutingDevice* const routing_;
  const std::atomic<uint64_t>* const bytes_written_;
};

}  // namespace ckptfs
