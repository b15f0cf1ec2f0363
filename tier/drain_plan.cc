// DrainPlan: see drain_plan.h.
#include "drain_plan.h"

#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <optional>

#include "util/aligned_buffer.h"
#include "util/crc32c.h"

namespace ckptfs {
namespace {

int64_t WallNanos() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The parts of `wanted` (sorted, disjoint) that no chunk covers.
std::vector<ByteRange> Missing(const std::vector<ByteRange>& wanted, const std::vector<ImageChunk>& have) {
  std::vector<ByteRange> out;
  size_t h = 0;
  for (const ByteRange& w : wanted) {
    uint64_t at = w.offset;
    const uint64_t end = w.offset + w.length;
    while (at < end) {
      while (h < have.size() && have[h].offset + have[h].length <= at) ++h;
      if (h == have.size() || have[h].offset >= end) {
        out.push_back({at, end - at});
        break;
      }
      if (have[h].offset > at) out.push_back({at, have[h].offset - at});
      at = std::min<uint64_t>(end, have[h].offset + have[h].length);
    }
  }
  return out;
}

// The lists' items taken in turn, one from each list that has any left: the
// first of every list, then the second of each, and so on. A segment is one
// object, and writes to one object are ordered by its placement group, all
// on one primary OSD: sent segment by segment, the 8 writes in flight were
// 8 chunks of one segment, serialised there, while the other OSDs waited.
template <typename T>
std::vector<T> TakeInTurn(std::vector<std::vector<T>> lists) {
  std::vector<T> out;
  for (size_t i = 0;; ++i) {
    const size_t before = out.size();
    for (std::vector<T>& list : lists) {
      if (i < list.size()) out.push_back(std::move(list[i]));
    }
    if (out.size() == before) return out;
  }
}

// The objects a manifest names, in both of its lists.
std::set<std::string> ObjectNames(const ImageManifest& m) {
  std::set<std::string> names;
  for (const auto* list : {&m.segments, &m.evicted}) {
    for (const ImageSegment& s : *list) names.insert(ImageManifest::ObjectName(s.segment, s.object_id));
  }
  return names;
}

// Whether `chunk` lies wholly inside `ranges` (sorted, disjoint, and
// adjacent ones merged, as a capture gives them).
bool Within(const std::vector<ByteRange>& ranges, const ImageChunk& chunk) {
  const uint64_t end = uint64_t{chunk.offset} + chunk.length;
  return std::any_of(ranges.begin(), ranges.end(), [&](const ByteRange& r) {
    return r.offset <= chunk.offset && end <= r.offset + r.length;
  });
}

}  // namespace

void DrainPlan::Resume(ImageManifest published) {
  published_ = std::move(published);
  next_object_id_ = std::max<uint64_t>(next_object_id_, published_.next_object_id);
}

Result<uint64_t> DrainPlan::Adopt(const CommittedImage& image) {
  uint64_t adopted = 0;
  // Chunks of any size are checked: an image drained with another write
  // size (-o drain_write, or an older default) resumes instead of being
  // sent again. None is longer than a segment.
  AlignedBuffer buf(std::min(published_.TallyChunks().largest, image.segment_size), /*zero=*/false);
  for (const SegmentImage& s : image.segments) {
    const ImageSegment* theirs = published_.Find(s.segment);
    if (!theirs || theirs->chunks.empty()) continue;
    // Only an object whose every chunk lies in what the segment's current
    // use has written: a segment handed out again still holds its older
    // bytes past that, which may match the image's chunks now and be
    // overwritten later, when no send would follow for a range the image
    // already covers. Nor is part of an object adopted: the rest would be
    // sent into it, over chunks its published manifest still names.
    const std::vector<ImageChunk>& chunks = theirs->chunks;
    if (!std::all_of(chunks.begin(), chunks.end(), [&](const ImageChunk& c) { return Within(s.ranges, c); })) {
      continue;
    }
    bool same = true;
    for (const ImageChunk& c : chunks) {
      if (c.length > buf.size() || c.offset % 4096 || c.length % 4096) {
        same = false;
        break;
      }
      CKPTFS_ASSIGN_OR_RETURN(bool unchanged, source_->ReadSegment(s.segment, s.incarnation, c.offset,
                                                                   buf.data(), c.length));
      if (!unchanged || crc32c::Value(buf.data(), c.length) != c.crc) {
        same = false;
        break;
      }
    }
    if (!same) continue;
    for (const ImageChunk& c : chunks) adopted += c.length;
    known_[s.segment] = Known{s.incarnation, theirs->object_id, chunks, Ownership::kToTakeOver};
  }
  adopted_ = true;
  if (published_.publish_seq != 0) {
    spdlog::info("{}: {} bytes of the image already match this store; the drain resumes after them",
                 writer_->name(), adopted);
  }
  return adopted;
}

std::vector<DrainPlan::Piece> DrainPlan::PiecesToSend(const CommittedImage& image, uint64_t chunk_bytes,
                                                     uint64_t* behind_bytes) {
  // Segments no longer in use lose their entry: when they come back it is
  // as a new incarnation, in a new object.
  std::set<uint32_t> in_image;
  for (const SegmentImage& s : image.segments) in_image.insert(s.segment);
  for (auto it = known_.begin(); it != known_.end();) {
    if (in_image.count(it->first)) {
      ++it;
      continue;
    }
    DropUnpublished(it->first, it->second);
    it = known_.erase(it);
  }

  std::vector<std::vector<Piece>> by_segment;
  *behind_bytes = 0;
  for (const SegmentImage& s : image.segments) {
    Known& k = known_[s.segment];
    if (k.object_id == 0 || k.incarnation != s.incarnation) {
      if (k.object_id != 0) DropUnpublished(s.segment, k);
      k = Known{s.incarnation, next_object_id_++, {}};
    }
    std::vector<Piece> mine;
    for (const ByteRange& r : Missing(s.ranges, k.chunks)) {
      *behind_bytes += r.length;
      for (uint64_t at = r.offset; at < r.offset + r.length; at += chunk_bytes) {
        mine.push_back({s.segment, at, std::min(chunk_bytes, r.offset + r.length - at)});
      }
    }
    if (!mine.empty()) by_segment.push_back(std::move(mine));
  }
  return TakeInTurn(std::move(by_segment));
}

void DrainPlan::DropUnpublished(uint32_t segment, const Known& k) {
  // A published object goes when a manifest no longer names it
  // (Published). One no manifest we know of named (chunks sent in a cycle
  // that a reused segment or an error cut short) would be found only by
  // the next daemon's listing: it goes the same way, with the next
  // manifest published.
  if (published_.FindObject(k.object_id) != nullptr) return;
  garbage_.AddUnpublished(ImageManifest::ObjectName(segment, k.object_id));
}

Status DrainPlan::Scan() {
  if (scanned_) return Status::Ok();
  CKPTFS_ASSIGN_OR_RETURN(std::vector<std::string> names, writer_->image()->List());
  // Listed while this writer still had the image: none of the names is of
  // objects a successor made (it makes them after its claim).
  CKPTFS_RETURN_IF_ERROR(writer_->CheckClaim());
  std::set<std::string> named = ObjectNames(published_);
  // This writer's objects are those it made or took over. One it was yet
  // to make, found listed, is another's: a dead writer left it under the
  // id this one handed out (or this one's own first write, reported
  // failed, arrived: then it is sent again, into a new object).
  for (const auto& [segment, k] : known_) {
    if (k.ownership != Ownership::kToCreate) named.insert(ImageManifest::ObjectName(segment, k.object_id));
  }
  std::set<std::string> listed;
  for (const std::string& name : names) {
    const std::optional<uint64_t> id = ImageManifest::ObjectIdOf(name);
    if (!id) continue;  // the manifest, the lock object, or not ours
    next_object_id_ = std::max(next_object_id_, *id + 1);
    listed.insert(name);
    // Written by a writer that died before naming it (or dropped by a
    // manifest whose removal it did not live to do).
    if (!named.count(name)) garbage_.Add(name);
  }
  for (auto& [segment, k] : known_) {
    if (k.ownership == Ownership::kToCreate && listed.count(ImageManifest::ObjectName(segment, k.object_id))) {
      k = Known{k.incarnation, next_object_id_++, {}, Ownership::kToCreate};
    }
  }
  scanned_ = true;
  return Status::Ok();
}

Result<RadosImage::WriteAs> DrainPlan::WriteAs(uint32_t segment, std::string* from) {
  const Known& k = known_.at(segment);
  RadosImage::WriteAs as{RadosImage::WriteAs::Mode::kOwner, ImageManifest::kOwnerXattr, writer_->owner()};
  switch (k.ownership) {
    case Ownership::kOwned:
      return as;
    case Ownership::kToCreate:
      as.mode = RadosImage::WriteAs::Mode::kCreate;
      return as;
    case Ownership::kToTakeOver: {
      // Looked up before the claim is checked: while the manifest still
      // names this writer, no successor has taken the object, so the owner
      // found is a previous writer's, and a successor's taking it between
      // here and the write refuses the write.
      const std::string name = ImageManifest::ObjectName(segment, k.object_id);
      auto owner = writer_->image()->Owner(name, ImageManifest::kOwnerXattr);
      if (!owner.ok() && owner.status().IsNotFound()) {
        // The published image named it, and it is gone: contested, so
        // that the segment gets a new object (SettleContested).
        return Status::Exists(writer_->name() + " has lost " + name + ", which its manifest names");
      }
      if (!owner.ok()) return owner.status();
      *from = std::move(*owner);
      CKPTFS_RETURN_IF_ERROR(writer_->CheckClaim());
      as.mode = RadosImage::WriteAs::Mode::kTakeOver;
      as.from = *from;
      return as;
    }
  }
  return as;
}

DrainPlan::Ownership DrainPlan::Sending(uint32_t segment) {
  Known& k = known_.at(segment);
  const Ownership before = k.ownership;
  k.ownership = Ownership::kOwned;
  return before;
}

void DrainPlan::WriteFailed(uint32_t segment, Ownership before) {
  if (before != Ownership::kOwned) known_.at(segment).ownership = before;
}

void DrainPlan::ChunkArrived(uint32_t segment, const ImageChunk& chunk) {
  std::vector<ImageChunk>& chunks = known_.at(segment).chunks;
  chunks.insert(std::upper_bound(chunks.begin(), chunks.end(), chunk,
                                 [](const ImageChunk& a, const ImageChunk& b) { return a.offset < b.offset; }),
                chunk);
}

Status DrainPlan::SettleContested(const std::set<uint32_t>& segments) {
  for (uint32_t segment : segments) {
    Known& k = known_.at(segment);
    const std::string name = ImageManifest::ObjectName(segment, k.object_id);
    auto owner = writer_->image()->Owner(name, ImageManifest::kOwnerXattr);
    if (!owner.ok() && !owner.status().IsNotFound()) return owner.status();
    // This writer's own first write, reported failed (timed out), arrived.
    if (owner.ok() && *owner == writer_->owner()) {
      k.ownership = Ownership::kOwned;
      continue;
    }
    // Another's: a successor's, if the manifest names one.
    CKPTFS_RETURN_IF_ERROR(writer_->CheckClaim());
    // Else an adopted object since lost, or one a dead writer left under
    // the id this one handed out. Not this writer's to fill: the segment
    // gets a new object. For the latter, the listing, if it has not run,
    // moves ids past every object there and sends this one to the garbage
    // (Scan); after it, it goes there now, unless a published manifest
    // names it.
    if (!owner.ok() || scanned_) {
      if (owner.ok() && published_.FindObject(k.object_id) == nullptr) garbage_.Add(name);
      k = Known{k.incarnation, next_object_id_++, {}, Ownership::kToCreate};
    } else {
      k = Known{k.incarnation, k.object_id, {}, Ownership::kToCreate};
    }
  }
  return Scan();
}

Result<ImageManifest> DrainPlan::NextManifest(const CommittedImage& image) const {
  ImageManifest next;
  next.store_id = image.store_id;
  next.publish_seq = published_.publish_seq + 1;
  next.commit_lsn = image.commit_lsn;
  next.published_ns = WallNanos();
  next.next_object_id = next_object_id_;
  next.superblock = image.superblock;
  std::set<uint64_t> local_objects;
  for (const SegmentImage& s : image.segments) {
    const Known& k = known_.at(s.segment);
    next.segments.push_back(ImageSegment{s.segment, k.object_id, k.chunks});
    local_objects.insert(k.object_id);
  }
  // Objects the commit points at by remote address: each was published
  // before its runs were evicted, as a segment entry or already evicted.
  for (uint64_t object : image.remote_objects) {
    if (local_objects.count(object)) continue;  // evicted after the capture
    const ImageSegment* held = published_.FindObject(object);
    if (held == nullptr) {
      return Status::Corruption("the store points at tier object " + std::to_string(object) +
                                ", which no published image of " + writer_->name() + " holds");
    }
    next.evicted.push_back(*held);
  }
  std::sort(next.evicted.begin(), next.evicted.end(),
            [](const ImageSegment& a, const ImageSegment& b) { return a.object_id < b.object_id; });
  return next;
}

void DrainPlan::Published(ImageManifest next) {
  garbage_.Published(ObjectNames(published_), ObjectNames(next));
  published_ = std::move(next);
}

}  // namespace ckptfs
