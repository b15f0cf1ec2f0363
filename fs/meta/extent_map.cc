// ExtentMap implementation.
#include "meta/extent_map.h"

#include <algorithm>
#include <limits>

namespace ckptfs {

void ExtentMap::Add(uint64_t offset, const MappedExtent& e) {
  entries_.emplace(offset, e);
  mapped_bytes_ += e.length;
  if (e.phys.reserved()) reserved_bytes_ += e.length;
  stored_bytes_ += e.phys.StoredShare(e.length);
}

std::map<uint64_t, MappedExtent>::iterator ExtentMap::Remove(
    std::map<uint64_t, MappedExtent>::iterator it) {
  mapped_bytes_ -= it->second.length;
  if (it->second.phys.reserved()) reserved_bytes_ -= it->second.length;
  stored_bytes_ -= it->second.phys.StoredShare(it->second.length);
  return entries_.erase(it);
}

void ExtentMap::Punch(uint64_t start, uint64_t end, const ReleaseFn& release) {
  if (start >= end) return;
  auto it = entries_.upper_bound(start);
  if (it != entries_.begin()) --it;
  while (it != entries_.end() && it->first < end) {
    const uint64_t e_start = it->first;
    const uint64_t e_end = e_start + it->second.length;
    if (e_end <= start) {
      ++it;
      continue;
    }
    MappedExtent e = it->second;
    it = Remove(it);
    const uint64_t cut_start = std::max(start, e_start);
    const uint64_t cut_end = std::min(end, e_end);
    if (release) {
      release(e.phys, static_cast<uint32_t>(e.skip + (cut_start - e_start)), cut_end - cut_start);
    }
    if (e_start < cut_start) {  // keep the head
      MappedExtent head = e;
      head.length = cut_start - e_start;
      Add(e_start, head);
    }
    if (cut_end < e_end) {  // keep the tail
      MappedExtent tail = e;
      tail.length = e_end - cut_end;
      tail.skip = static_cast<uint32_t>(e.skip + (cut_end - e_start));
      Add(cut_end, tail);
      it = std::next(entries_.find(cut_end));
    }
  }
}

void ExtentMap::Insert(uint64_t offset, const MappedExtent& extent, const ReleaseFn& release) {
  if (extent.length == 0) return;
  Punch(offset, offset + extent.length, release);
  Add(offset, extent);
}

void ExtentMap::PunchHole(uint64_t offset, uint64_t length, const ReleaseFn& release) {
  const uint64_t end = length > std::numeric_limits<uint64_t>::max() - offset
                           ? std::numeric_limits<uint64_t>::max()
                           : offset + length;
  Punch(offset, end, release);
}

void ExtentMap::Truncate(uint64_t size, const ReleaseFn& release) {
  Punch(size, std::numeric_limits<uint64_t>::max(), release);
}

std::vector<ExtentPiece> ExtentMap::Lookup(uint64_t offset, uint64_t length) const {
  std::vector<ExtentPiece> pieces;
  const uint64_t end = offset + length;
  uint64_t cursor = offset;
  auto it = entries_.upper_bound(offset);
  if (it != entries_.begin()) --it;
  for (; it != entries_.end() && it->first < end && cursor < end; ++it) {
    const uint64_t e_start = it->first;
    const uint64_t e_end = e_start + it->second.length;
    if (e_end <= cursor) continue;
    if (e_start > cursor) {
      pieces.push_back({cursor, e_start - cursor, true, {}, 0});
      cursor = e_start;
    }
    const uint64_t piece_end = std::min(end, e_end);
    pieces.push_back({cursor, piece_end - cursor, it->second.phys.reserved(), it->second.phys,
                      static_cast<uint32_t>(it->second.skip + (cursor - e_start))});
    cursor = piece_end;
  }
  if (cursor < end) pieces.push_back({cursor, end - cursor, true, {}, 0});
  return pieces;
}

}  // namespace ckptfs
