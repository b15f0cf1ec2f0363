// PublishedView: see published_view.h.
#include "published_view.h"

#include <cstring>
#include <string>
#include <vector>

namespace ckptfs {
namespace {

std::vector<ByteRange> RangesOf(const std::vector<ImageChunk>& chunks) {
  std::vector<ByteRange> ranges;
  for (const ImageChunk& c : chunks) {
    if (!ranges.empty() && ranges.back().offset + ranges.back().length == c.offset) {
      ranges.back().length += c.length;
    } else {
      ranges.push_back({c.offset, c.length});
    }
  }
  return ranges;
}

}  // namespace

void PublishedView::Show(const ImageManifest& published, const CommittedImage* image) {
  std::map<uint32_t, HeldSegment> segments;
  if (image != nullptr) {
    for (const SegmentImage& s : image->segments) {
      const ImageSegment* held = published.Find(s.segment);
      if (held == nullptr) continue;
      segments[s.segment] = HeldSegment{s.incarnation, RemoteSegment{held->object_id, RangesOf(held->chunks)}};
    }
  }
  std::map<uint64_t, uint32_t> objects;
  for (const auto* list : {&published.segments, &published.evicted}) {
    for (const ImageSegment& s : *list) objects[s.object_id] = s.segment;
  }
  MutexLock lock(&mu_);
  segments_ = std::move(segments);
  objects_ = std::move(objects);
  ++seq_;
  changed_.NotifyAll();
}

void PublishedView::Abandon() {
  MutexLock lock(&mu_);
  changed_.NotifyAll();
}

uint64_t PublishedView::Seq() {
  MutexLock lock(&mu_);
  return seq_;
}

bool PublishedView::WaitForNewer(uint64_t seen, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (seq_ <= seen) {
    if (image_->Fenced()) return false;  // no image will come
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    changed_.WaitFor(&mu_, deadline - now);
  }
  return true;
}

std::optional<RemoteSegment> PublishedView::Published(uint32_t segment, uint64_t incarnation) {
  // A fenced client can read nothing back: evicting to it would lose the
  // local copy of what it can no longer serve.
  if (image_->Fenced()) return std::nullopt;
  MutexLock lock(&mu_);
  auto it = segments_.find(segment);
  if (it == segments_.end() || it->second.incarnation != incarnation) return std::nullopt;
  return it->second.where;
}

Status PublishedView::ReadRemote(uint64_t object, uint64_t offset, void* buf, size_t len) {
  uint32_t segment = 0;
  {
    MutexLock lock(&mu_);
    auto it = objects_.find(object);
    if (it == objects_.end()) {
      return Status::IOError(image_->target().ToString() + " holds no object " + std::to_string(object) +
                             " for an evicted run");
    }
    segment = it->second;
  }
  char* out = static_cast<char*>(buf);
  CKPTFS_ASSIGN_OR_RETURN(size_t n, image_->Read(ImageManifest::ObjectName(segment, object), out, len, offset));
  // The object ends at the last chunk sent; the block-aligned read may ask
  // for bytes past it, which were never written.
  if (n < len) std::memset(out + n, 0, len - n);
  return Status::Ok();
}

}  // namespace ckptfs
