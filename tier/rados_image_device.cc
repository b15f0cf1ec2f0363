// RadosImageDevice: see rados_image_device.h.
#include "rados_image_device.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "format/physical_extent.h"
#include "format/superblock.h"
#include "published_manifest.h"

namespace ckptfs {

Result<std::unique_ptr<RadosImageDevice>> RadosImageDevice::Open(std::unique_ptr<RadosImage> image) {
  const std::string name = image->target().ToString();
  CKPTFS_ASSIGN_OR_RETURN(ImageManifest manifest, ReadPublishedManifest(image.get()));
  auto sb = Superblock::Decode(manifest.superblock.data());
  if (!sb.ok()) return sb.status().WithContext(name + ": the image's superblock");
  return std::unique_ptr<RadosImageDevice>(new RadosImageDevice(std::move(image), std::move(manifest),
                                                                sb->store_id, sb->data_start, sb->segment_size,
                                                                sb->device_size));
}

RadosImageDevice::RadosImageDevice(std::unique_ptr<RadosImage> image, ImageManifest manifest, uint64_t store_id,
                                   uint64_t data_start, uint64_t segment_size, uint64_t device_size)
    : image_(std::move(image)),
      manifest_(std::move(manifest)),
      store_id_(store_id),
      data_start_(data_start),
      segment_size_(segment_size),
      device_size_(device_size) {}

void RadosImageDevice::StartChunkReads(const ImageSegment* entry, uint64_t lo, uint64_t hi, char* out,
                                       std::vector<Fetch>* fetches) {
  uint64_t filled = lo;  // out holds, or a fetch will put, the bytes before this
  // One stretch of adjacent chunks: the drain cuts a segment into chunks
  // (its writes, 2 MiB by default), and a stored run across a cut would
  // otherwise cost two reads.
  auto fetch = [&](uint64_t from, uint64_t to) {
    // Zeros only where no chunk is: the rest is overwritten anyway.
    std::memset(out + (filled - lo), 0, from - filled);
    filled = to;
    char* dst = out + (from - lo);
    if (cache_ && cache_->Read(entry->object_id, from, dst, to - from)) return;
    fetches->push_back(Fetch{image_->StartRead(ImageManifest::ObjectName(entry->segment, entry->object_id),
                                               dst, to - from, from),
                             entry->object_id, from, dst, to - from});
  };
  if (entry != nullptr) {
    uint64_t from = 0, to = 0;  // the stretch being gathered; empty when equal
    for (const ImageChunk& c : entry->chunks) {
      const uint64_t lo_c = std::max<uint64_t>(lo, c.offset);
      const uint64_t hi_c = std::min<uint64_t>(hi, c.offset + c.length);
      if (lo_c >= hi_c) continue;
      if (from < to && to == lo_c) {
        to = hi_c;
        continue;
      }
      if (from < to) fetch(from, to);
      from = lo_c;
      to = hi_c;
    }
    if (from < to) fetch(from, to);
  }
  std::memset(out + (filled - lo), 0, hi - filled);
}

Status RadosImageDevice::Read(uint64_t offset, void* buf, size_t len) {
  char* out = static_cast<char*>(buf);
  std::vector<Fetch> fetches;
  if (const PhysicalExtent at{offset}; at.remote()) {
    // A run the store evicted before this image was published.
    const ImageSegment* entry = manifest_.FindObject(at.remote_object());
    if (entry == nullptr) {
      return Status::Corruption(image_->target().ToString() + ": the image names no object " +
                                std::to_string(at.remote_object()) + " for an evicted run");
    }
    StartChunkReads(entry, at.remote_offset(), at.remote_offset() + len, out, &fetches);
    return WaitAll(&fetches);
  }
  if (offset + len > device_size_) return Status::Range("read past the end of the image");
  const uint64_t end = offset + len;
  // Below the data segments: the superblock copies, zeros around them.
  if (offset < data_start_) {
    std::memset(out, 0, std::min(end, data_start_) - offset);
    for (uint64_t copy : kSuperblockOffsets) {
      const uint64_t lo = std::max(offset, copy), hi = std::min(end, copy + 4096);
      if (lo < hi) std::memcpy(out + (lo - offset), manifest_.superblock.data() + (lo - copy), hi - lo);
    }
  }
  uint64_t at = std::max(offset, data_start_);
  while (at < end) {
    const uint32_t segment = static_cast<uint32_t>((at - data_start_) / segment_size_);
    const uint64_t seg_start = data_start_ + segment * segment_size_;
    const uint64_t seg_end = std::min(end, seg_start + segment_size_);
    StartChunkReads(manifest_.Find(segment), at - seg_start, seg_end - seg_start, out + (at - offset),
                    &fetches);
    at = seg_end;
  }
  return WaitAll(&fetches);
}

std::optional<RadosImageDevice::Stretch> RadosImageDevice::WholeStretch(uint64_t offset, size_t len) const {
  Stretch s;
  if (const PhysicalExtent at{offset}; at.remote()) {
    s.entry = manifest_.FindObject(at.remote_object());
    s.offset = at.remote_offset();
  } else {
    if (offset < data_start_ || offset + len > device_size_) return std::nullopt;
    const uint64_t segment = (offset - data_start_) / segment_size_;
    s.offset = offset - (data_start_ + segment * segment_size_);
    if (s.offset + len > segment_size_) return std::nullopt;
    s.entry = manifest_.Find(static_cast<uint32_t>(segment));
  }
  if (s.entry == nullptr) return std::nullopt;
  // Chunks end to end from before the start to past the end: no zeros
  // between them, which the image holds but no object does.
  uint64_t covered = s.offset;
  for (const ImageChunk& c : s.entry->chunks) {
    if (covered >= s.offset + len || c.offset > covered) break;
    covered = std::max<uint64_t>(covered, c.offset + c.length);
  }
  if (covered < s.offset + len) return std::nullopt;
  return s;
}

Result<LentBytes> RadosImageDevice::ReadLent(uint64_t offset, size_t len) {
  const std::optional<Stretch> s = WholeStretch(offset, len);
  if (!s || len == 0) return LentBytes{};
  const uint64_t object = s->entry->object_id;
  if (cache_) {
    if (std::optional<ImageCache::Hit> hit = cache_->Find(object, s->offset, len)) {
      return LentBytes{hit->piece->data() + hit->at, len, hit->piece, std::nullopt};
    }
  }
  auto op = image_->StartRead(ImageManifest::ObjectName(s->entry->segment, object), len, s->offset);
  CKPTFS_ASSIGN_OR_RETURN(size_t n, op->Wait());
  reads_.fetch_add(1, std::memory_order_relaxed);
  read_bytes_.fetch_add(n, std::memory_order_relaxed);
  if (n < len) return LentBytes{};  // the object ends early: Read gives the zeros after it
  std::shared_ptr<const RadosImage::Reply> reply = op->TakeReply();
  const uint32_t crc = reply->Crc32c();
  if (cache_) cache_->Insert(object, s->offset, reply->data(), len, crc);
  return LentBytes{reply->data(), len, reply, crc};
}

Status RadosImageDevice::WaitAll(std::vector<Fetch>* fetches) {
  Status first;
  for (Fetch& f : *fetches) {
    auto n = f.op->Wait();
    if (!n.ok()) {
      if (first.ok()) first = n.status();
      continue;
    }
    reads_.fetch_add(1, std::memory_order_relaxed);
    read_bytes_.fetch_add(f.length, std::memory_order_relaxed);
    // Past the object's end the image holds zeros.
    if (*n < f.length) std::memset(f.dst + *n, 0, f.length - *n);
    if (cache_) cache_->Insert(f.object, f.offset, f.dst, f.length);
  }
  return first;
}

RemoteReadCounters RadosImageDevice::remote_counters() const {
  RemoteReadCounters c;
  c.reads = reads_.load();
  c.bytes = read_bytes_.load();
  if (cache_) {
    const ImageCacheCounters cached = cache_->counters();
    c.cache_hit_bytes = cached.hit_bytes;
    c.cache_fill_bytes = cached.fill_bytes;
  }
  return c;
}

Status RadosImageDevice::AttachCache(const std::string& path, int fd, uint64_t max_bytes) {
  CKPTFS_ASSIGN_OR_RETURN(cache_, ImageCache::Open(path, fd, image_->target().ToString(), store_id_, max_bytes));
  return Status::Ok();
}

Status RadosImageDevice::ReadOnly() const {
  return Status::Permission(image_->target().ToString() + " is mounted read-only from RADOS");
}

Status RadosImageDevice::Write(uint64_t, const void*, size_t) { return ReadOnly(); }
Status RadosImageDevice::Flush() { return ReadOnly(); }
Status RadosImageDevice::Provision(uint64_t, uint64_t) { return ReadOnly(); }

}  // namespace ckptfs
