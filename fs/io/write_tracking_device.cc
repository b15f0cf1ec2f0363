// WriteTrackingDevice: see write_tracking_device.h.
#include "io/write_tracking_device.h"

#include <algorithm>

namespace ckptfs {

WriteTrackingDevice::WriteTrackingDevice(std::unique_ptr<BlockDevice> inner, uint64_t data_start,
                                         uint64_t segment_size, uint32_t segment_count)
    : inner_(std::move(inner)), data_start_(data_start), segment_size_(segment_size) {
  MutexLock lock(&mu_);
  segments_.resize(segment_count);
}

Status WriteTrackingDevice::Read(uint64_t offset, void* buf, size_t len) {
  return inner_->Read(offset, buf, len);
}

Status WriteTrackingDevice::Write(uint64_t offset, const void* buf, size_t len) {
  CKPTFS_RETURN_IF_ERROR(inner_->Write(offset, buf, len));
  // Recorded once the bytes are there: a reader that finds the range
  // recorded reads what was written. The superblocks (below data_start) are
  // not segment bytes; the journal hands them out itself.
  if (offset + len <= data_start_) return Status::Ok();
  MutexLock lock(&mu_);
  uint64_t at = std::max(offset, data_start_);
  const uint64_t end = offset + len;
  while (at < end) {
    const uint64_t segment = (at - data_start_) / segment_size_;
    if (segment >= segments_.size()) break;
    const uint64_t in_segment = (at - data_start_) % segment_size_;
    const uint64_t n = std::min(end - at, segment_size_ - in_segment);
    RecordLocked(static_cast<uint32_t>(segment), in_segment, n);
    at += n;
  }
  return Status::Ok();
}

void WriteTrackingDevice::RecordLocked(uint32_t segment, uint64_t offset, uint64_t len) {
  std::vector<ByteRange>& ranges = segments_[segment].written;
  // Writes arrive in nearly increasing order (appends), so the common case
  // extends the last range.
  if (!ranges.empty() && ranges.back().offset + ranges.back().length == offset) {
    ranges.back().length += len;
    return;
  }
  ByteRange added{offset, len};
  auto it = std::lower_bound(ranges.begin(), ranges.end(), added,
                             [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  it = ranges.insert(it, added);
  // Merge with the neighbours it touches or overlaps.
  if (it != ranges.begin()) {
    auto prev = std::prev(it);
    if (prev->offset + prev->length >= it->offset) {
      const uint64_t end = std::max(prev->offset + prev->length, it->offset + it->length);
      prev->length = end - prev->offset;
      it = ranges.erase(it);
      it = std::prev(it);
    }
  }
  while (std::next(it) != ranges.end() && it->offset + it->length >= std::next(it)->offset) {
    auto next = std::next(it);
    const uint64_t end = std::max(it->offset + it->length, next->offset + next->length);
    it->length = end - it->offset;
    ranges.erase(next);
  }
}

Status WriteTrackingDevice::Provision(uint64_t offset, uint64_t len) {
  {
    // The segment table provisions a segment each time it hands it out:
    // whatever it held belongs to its previous life.
    MutexLock lock(&mu_);
    if (offset >= data_start_ && (offset - data_start_) % segment_size_ == 0 &&
        len == segment_size_) {
      const uint64_t segment = (offset - data_start_) / segment_size_;
      if (segment < segments_.size()) {
        segments_[segment].incarnation = next_incarnation_++;
        segments_[segment].written.clear();
      }
    }
  }
  return inner_->Provision(offset, len);
}

SegmentImage WriteTrackingDevice::Written(uint32_t segment) const {
  MutexLock lock(&mu_);
  const Segment& s = segments_.at(segment);
  return SegmentImage{segment, s.incarnation, s.written};
}

uint64_t WriteTrackingDevice::Incarnation(uint32_t segment) const {
  MutexLock lock(&mu_);
  return segments_.at(segment).incarnation;
}

Result<bool> WriteTrackingDevice::ReadIfUnchanged(uint32_t segment, uint64_t incarnation,
                                                  uint64_t offset, void* buf, size_t len) {
  if (Incarnation(segment) != incarnation) return false;
  CKPTFS_RETURN_IF_ERROR(inner_->Read(data_start_ + segment * segment_size_ + offset, buf, len));
  // A hand-out after the first check would have bumped the incarnation
  // before any byte of the new life was written (Provision comes first).
  return Incarnation(segment) == incarnation;
}

}  // namespace ckptfs
