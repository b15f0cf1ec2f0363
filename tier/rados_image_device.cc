// RadosImageDevice: see rados_image_device.h.
#include "rados_image_device.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "format/superblock.h"

namespace ckptfs {

Result<std::unique_ptr<RadosImageDevice>> RadosImageDevice::Open(std::unique_ptr<RadosImage> image) {
  const std::string name = image->target().ToString();
  auto data = image->ReadWhole(ImageManifest::kObject);
  if (!data.ok()) {
    if (data.status().IsNotFound()) {
      return Status::NotFound(name + " holds no image (no manifest): nothing was drained there yet");
    }
    return data.status();
  }
  auto manifest = ImageManifest::Decode(*data);
  if (!manifest.ok()) return manifest.status().WithContext(name);
  auto sb = Superblock::Decode(manifest->superblock.data());
  if (!sb.ok()) return sb.status().WithContext(name + ": the image's superblock");
  return std::unique_ptr<RadosImageDevice>(new RadosImageDevice(
      std::move(image), std::move(*manifest), sb->data_start, sb->segment_size, sb->device_size));
}

RadosImageDevice::RadosImageDevice(std::unique_ptr<RadosImage> image, ImageManifest manifest,
                                   uint64_t data_start, uint64_t segment_size, uint64_t device_size)
    : image_(std::move(image)),
      manifest_(std::move(manifest)),
      data_start_(data_start),
      segment_size_(segment_size),
      device_size_(device_size) {}

Status RadosImageDevice::Read(uint64_t offset, void* buf, size_t len) {
  if (offset + len > device_size_) return Status::Range("read past the end of the image");
  char* out = static_cast<char*>(buf);
  const uint64_t end = offset + len;
  // Each run of chunks that are adjacent in one object is one RADOS read:
  // the drain cuts a segment into 4 MiB chunks, and a stored run across a
  // cut would otherwise cost the OSDs two operations.
  struct Piece {
    size_t object;        // index in `objects`
    uint64_t lo, hi;      // device bytes
    uint64_t object_off;  // where lo is in the object
  };
  std::vector<std::string> objects;
  std::vector<Piece> pieces;
  uint64_t at = std::max(offset, data_start_);
  while (at < end) {
    const uint32_t segment = static_cast<uint32_t>((at - data_start_) / segment_size_);
    const uint64_t seg_start = data_start_ + segment * segment_size_;
    const uint64_t seg_end = std::min(end, seg_start + segment_size_);
    if (const ImageSegment* s = manifest_.Find(segment)) {
      bool named = false;
      for (const ImageChunk& c : s->chunks) {
        const uint64_t lo = std::max(at, seg_start + c.offset);
        const uint64_t hi = std::min(seg_end, seg_start + c.offset + c.length);
        if (lo >= hi) continue;
        if (!named) {
          objects.push_back(ImageManifest::ObjectName(segment, s->object_id));
          named = true;
        }
        if (!pieces.empty() && pieces.back().object == objects.size() - 1 && pieces.back().hi == lo) {
          pieces.back().hi = hi;
        } else {
          pieces.push_back(Piece{objects.size() - 1, lo, hi, lo - seg_start});
        }
      }
    }
    at = seg_end;
  }
  // Zeros where no chunk is: only there, since the chunks are overwritten.
  uint64_t filled = offset;
  for (const Piece& p : pieces) {
    std::memset(out + (filled - offset), 0, p.lo - filled);
    filled = p.hi;
  }
  std::memset(out + (filled - offset), 0, end - filled);
  // The superblock copies (below data_start_, so never in a piece).
  for (uint64_t copy : kSuperblockOffsets) {
    const uint64_t lo = std::max(offset, copy), hi = std::min(end, copy + 4096);
    if (lo < hi) std::memcpy(out + (lo - offset), manifest_.superblock.data() + (lo - copy), hi - lo);
  }
  std::vector<std::unique_ptr<RadosImage::Op>> ops;
  ops.reserve(pieces.size());
  for (const Piece& p : pieces) {
    ops.push_back(image_->StartRead(objects[p.object], out + (p.lo - offset), p.hi - p.lo, p.object_off));
  }
  Status first;
  for (size_t i = 0; i < ops.size(); ++i) {
    auto n = ops[i]->Wait();
    if (!n.ok()) {
      if (first.ok()) first = n.status();
      continue;
    }
    // Past the object's end the image holds zeros.
    const Piece& p = pieces[i];
    if (*n < p.hi - p.lo) std::memset(out + (p.lo - offset) + *n, 0, p.hi - p.lo - *n);
  }
  return first;
}

Status RadosImageDevice::ReadOnly() const {
  return Status::Permission(image_->target().ToString() + " is mounted read-only from RADOS");
}

Status RadosImageDevice::Write(uint64_t, const void*, size_t) { return ReadOnly(); }
Status RadosImageDevice::Flush() { return ReadOnly(); }
Status RadosImageDevice::Provision(uint64_t, uint64_t) { return ReadOnly(); }

}  // namespace ckptfs
