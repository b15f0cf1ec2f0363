// ImageManifest encoding; see image_manifest.h for the layout.
#include "image_manifest.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string_view>

#include "util/coding.h"
#include "util/crc32c.h"

namespace ckptfs {
namespace {

constexpr char kMagic[8] = {'C', 'K', 'P', 'T', 'I', 'M', 'G', '\n'};
constexpr size_t kSuperblockBlock = 4096;

// The local list is sorted by segment, the evicted one by object.
enum class SortedBy { kSegment, kObject };

Result<std::vector<ImageSegment>> DecodeEntries(Decoder* d, SortedBy sorted_by) {
  const bool by_object = sorted_by == SortedBy::kObject;
  const std::string key = by_object ? "evicted object" : "segment";
  std::vector<ImageSegment> out;
  uint32_t count = 0;
  if (!d->U32(&count)) return Status::Corruption("image manifest is truncated");
  for (uint32_t i = 0; i < count; ++i) {
    ImageSegment s;
    uint32_t chunks = 0;
    if (!d->U32(&s.segment) || !d->U64(&s.object_id) || !d->U32(&chunks)) {
      return Status::Corruption("image manifest is truncated in " + key + " entry " + std::to_string(i));
    }
    if (!out.empty() && (by_object ? out.back().object_id >= s.object_id : out.back().segment >= s.segment)) {
      return Status::Corruption("image manifest lists " + key + "s out of order");
    }
    for (uint32_t j = 0; j < chunks; ++j) {
      ImageChunk c;
      if (!d->U32(&c.offset) || !d->U32(&c.length) || !d->U32(&c.crc)) {
        return Status::Corruption("image manifest is truncated in " + key + " entry " + std::to_string(i));
      }
      if (!s.chunks.empty() && s.chunks.back().offset + s.chunks.back().length > c.offset) {
        return Status::Corruption("image manifest has overlapping chunks in segment " +
                                  std::to_string(s.segment));
      }
      s.chunks.push_back(c);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::string ImageManifest::ObjectName(uint32_t segment, uint64_t object_id) {
  return "seg." + std::to_string(segment) + "." + std::to_string(object_id);
}

std::optional<uint64_t> ImageManifest::ObjectIdOf(const std::string& name) {
  // Digits only (sscanf's %u would take signs and spaces too).
  constexpr std::string_view kPrefix = "seg.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const char* end = name.data() + name.size();
  uint32_t segment = 0;
  auto [dot, ok] = std::from_chars(name.data() + kPrefix.size(), end, segment);
  if (ok != std::errc() || dot == end || *dot != '.') return std::nullopt;
  uint64_t id = 0;
  auto [tail, parsed] = std::from_chars(dot + 1, end, id);
  if (parsed != std::errc() || tail != end || id == 0) return std::nullopt;
  return id;
}

const ImageSegment* ImageManifest::Find(uint32_t segment) const {
  auto it = std::lower_bound(segments.begin(), segments.end(), segment,
                             [](const ImageSegment& s, uint32_t n) { return s.segment < n; });
  return it != segments.end() && it->segment == segment ? &*it : nullptr;
}

const ImageSegment* ImageManifest::FindObject(uint64_t object_id) const {
  auto it = std::lower_bound(evicted.begin(), evicted.end(), object_id,
                             [](const ImageSegment& s, uint64_t id) { return s.object_id < id; });
  if (it != evicted.end() && it->object_id == object_id) return &*it;
  auto local = std::find_if(segments.begin(), segments.end(),
                            [&](const ImageSegment& s) { return s.object_id == object_id; });
  return local != segments.end() ? &*local : nullptr;
}

ImageManifest::ChunkTally ImageManifest::TallyChunks() const {
  ChunkTally tally;
  for (const auto* list : {&segments, &evicted}) {
    for (const ImageSegment& s : *list) {
      tally.count += s.chunks.size();
      for (const ImageChunk& c : s.chunks) {
        tally.bytes += c.length;
        tally.largest = std::max<uint64_t>(tally.largest, c.length);
      }
    }
  }
  return tally;
}

std::string ImageManifest::Encode() const {
  std::string out(kMagic, sizeof kMagic);
  Encoder e(&out);
  // Version 1 while nothing is evicted, so nodes that predate eviction
  // still restore every image that does not need it.
  e.U32(evicted.empty() ? 1 : kVersion);
  e.U32(0);
  e.U64(store_id);
  e.U64(publish_seq);
  e.U64(commit_lsn);
  e.I64(published_ns);
  e.U64(next_object_id);
  std::string sb = superblock;
  sb.resize(kSuperblockBlock, '\0');
  out += sb;
  for (const auto* list : {&segments, &evicted}) {
    if (list == &evicted && evicted.empty()) break;
    e.U32(static_cast<uint32_t>(list->size()));
    for (const ImageSegment& s : *list) {
      e.U32(s.segment);
      e.U64(s.object_id);
      e.U32(static_cast<uint32_t>(s.chunks.size()));
      for (const ImageChunk& c : s.chunks) {
        e.U32(c.offset);
        e.U32(c.length);
        e.U32(c.crc);
      }
    }
  }
  e.U32(crc32c::Value(out.data(), out.size()));
  return out;
}

Result<ImageManifest> ImageManifest::Decode(const std::string& data) {
  if (data.size() < sizeof kMagic || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) {
    return Status::Invalid("not a ckptfs image manifest (bad magic)");
  }
  if (data.size() < sizeof kMagic + 4 + 4) return Status::Corruption("image manifest is truncated");
  Decoder d(std::string_view(data).substr(sizeof kMagic));
  uint32_t version = 0, flags = 0;
  d.U32(&version);
  d.U32(&flags);
  if (version < 1 || version > kVersion) {
    return Status::NotSupported("image manifest version " + std::to_string(version) +
                                " (this ckptfs reads versions 1 to " + std::to_string(kVersion) + ")");
  }
  const uint32_t stored_crc = DecodeFixed32(data.data() + data.size() - 4);
  if (crc32c::Value(data.data(), data.size() - 4) != stored_crc) {
    return Status::Corruption("image manifest checksum mismatch");
  }
  ImageManifest m;
  bool ok = d.U64(&m.store_id) && d.U64(&m.publish_seq) && d.U64(&m.commit_lsn) &&
            d.I64(&m.published_ns) && d.U64(&m.next_object_id);
  if (!ok || d.rest().size() < kSuperblockBlock + 4) return Status::Corruption("image manifest is truncated");
  m.superblock = std::string(d.rest().substr(0, kSuperblockBlock));
  d = Decoder(d.rest().substr(kSuperblockBlock));
  CKPTFS_ASSIGN_OR_RETURN(m.segments, DecodeEntries(&d, SortedBy::kSegment));
  if (version >= 2) {
    CKPTFS_ASSIGN_OR_RETURN(m.evicted, DecodeEntries(&d, SortedBy::kObject));
  }
  if (d.rest().size() != 4) return Status::Corruption("image manifest has trailing bytes");
  return m;
}

}  // namespace ckptfs
