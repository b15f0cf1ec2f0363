// CommittedImages: the CommittedImageSource of a store opened with
// MountOptions::track_committed_images. It owns nothing but pointers: the
// journal says what the log is at the last commit, the segment table which
// data segments that commit may point into, and the write-tracking device
// which bytes of each were written in which incarnation.
#pragma once

#include <atomic>

#include "ckptfs/committed_image.h"
#include "io/write_tracking_device.h"
#include "journal/journal.h"
#include "segment/segment_table.h"

namespace ckptfs {

class CommittedImages : public CommittedImageSource {
 public:
  // Every pointer must outlive this object.
  CommittedImages(Journal* journal, SegmentTable* segments, WriteTrackingDevice* device,
                  const std::atomic<uint64_t>* bytes_written)
      : journal_(journal), segments_(segments), device_(device), bytes_written_(bytes_written) {}

  Result<CommittedImage> CaptureCommitted() override;
  uint64_t CommittedLsn() const override { return journal_->committed_lsn(); }
  uint64_t BytesWritten() const override { return bytes_written_->load(); }
  Result<bool> ReadSegment(uint32_t segment, uint64_t incarnation, uint64_t offset, void* buf,
                           size_t len) override {
    return device_->ReadIfUnchanged(segment, incarnation, offset, buf, len);
  }

 private:
  Journal* const journal_;
  SegmentTable* const segments_;
  WriteTrackingDevice* const device_;
  const std::atomic<uint64_t>* const bytes_written_;
};

}  // namespace ckptfs
