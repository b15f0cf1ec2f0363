// WriteTrackingDevice: a BlockDevice decorator that remembers which bytes of
// each segment were written, and in which incarnation of the segment, so a
// tier (tier/drainer.h) can copy exactly what a commit made durable and
// nothing twice.
//
// An incarnation is one use of a segment between two hand-outs: the segment
// table provisions a segment (BlockDevice::Provision over the whole of it)
// every time it hands it out, so a Provision that covers a segment starts a
// new incarnation with nothing written. Segments in use when the store was
// opened are in incarnation 0, whose written bytes are unknown (the caller
// decides what to assume). Incarnation numbers are unique for the life of
// the device object, never reused, so (segment, incarnation) names one
// content.
//
// Within an incarnation a segment is append-only (the data log and the log
// writer never rewrite a block), so a range once recorded keeps its bytes
// until the segment is handed out again. ReadIfUnchanged relies on that: a
// read that saw the same incarnation before and after it read bytes that
// belong to that incarnation.
//
// Thread-safe: mu_ guards the table and is taken after every other lock
// (it may be taken under the journal's commit lock and the segment table's).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ckptfs/committed_image.h"
#include "io/block_device.h"
#include "util/mutex.h"

namespace ckptfs {

class WriteTrackingDevice : public BlockDevice {
 public:
  // Segments start at `data_start`, `segment_size` bytes each.
  WriteTrackingDevice(std::unique_ptr<BlockDevice> inner, uint64_t data_start,
                      uint64_t segment_size, uint32_t segment_count);

  Status Read(uint64_t offset, void* buf, size_t len) override;
  Status Write(uint64_t offset, const void* buf, size_t len) override;
  Status Flush() override { return inner_->Flush(); }
  uint64_t size() const override { return inner_->size(); }
  Status Provision(uint64_t offset, uint64_t len) override;
  uint64_t ProvisionShortfall() const override { return inner_->ProvisionShortfall(); }

  // The segment's incarnation and the ranges written in it (sorted,
  // disjoint, merged), offsets within the segment.
  SegmentImage Written(uint32_t segment) const EXCLUDES(mu_);
  uint64_t Incarnation(uint32_t segment) const EXCLUDES(mu_);
  // Reads `len` bytes at `offset` within `segment` into `buf` (aligned as
  // for Read) if the segment is still in `incarnation` once the bytes are in
  // memory; false, with `buf` undefined, if it was handed out again.
  Result<bool> ReadIfUnchanged(uint32_t segment, uint64_t incarnation, uint64_t offset, void* buf,
                               size_t len);

 private:
  struct Segment {
    uint64_t incarnation = 0;
    std::vector<ByteRange> written;
  };
  void RecordLocked(uint32_t segment, uint64_t offset, uint64_t len) REQUIRES(mu_);

  const std::unique_ptr<BlockDevice> inner_;
  const uint64_t data_start_;
  const uint64_t segment_size_;

  mutable Mutex mu_;
  std::vector<Segment> segments_ GUARDED_BY(mu_);
  uint64_t next_incarnation_ GUARDED_BY(mu_) = 1;
};

}  // namespace ckptfs
