// RangeRefs implementation.
#include "segment/range_refs.h"

#include <algorithm>
#include <iterator>

namespace ckptfs {

void RangeRefs::SplitAt(uint64_t at) {
  auto it = spans_.upper_bound(at);
  if (it == spans_.begin()) return;
  --it;
  if (it->first == at || it->second.end <= at) return;
  const Span tail{it->second.end, it->second.count};
  it->second.end = at;
  spans_.emplace_hint(std::next(it), at, tail);
}

void RangeRefs::MergeAround(uint64_t start, uint64_t end) {
  auto it = spans_.lower_bound(start);
  if (it != spans_.begin()) --it;
  while (it != spans_.end() && it->first <= end) {
    auto next = std::next(it);
    if (next == spans_.end()) break;
    if (it->second.end == next->first && it->second.count == next->second.count) {
      it->second.end = next->second.end;
      spans_.erase(next);
    } else {
      it = next;
    }
  }
}

uint64_t RangeRefs::Add(uint64_t start, uint64_t length) {
  if (length == 0) return 0;
  const uint64_t end = start + length;
  SplitAt(start);
  SplitAt(end);
  uint64_t newly = 0;
  uint64_t cursor = start;
  auto it = spans_.lower_bound(start);
  while (cursor < end) {
    if (it == spans_.end() || it->first >= end) {
      spans_.emplace_hint(it, cursor, Span{end, 1});
      newly += end - cursor;
      break;
    }
    if (it->first > cursor) {  // a gap before the next span
      spans_.emplace_hint(it, cursor, Span{it->first, 1});
      newly += it->first - cursor;
    }
    ++it->second.count;
    cursor = it->second.end;
    ++it;
  }
  MergeAround(start, end);
  return newly;
}

uint64_t RangeRefs::Remove(uint64_t start, uint64_t length) {
  if (length == 0) return 0;
  const uint64_t end = start + length;
  SplitAt(start);
  SplitAt(end);
  uint64_t freed = 0;
  auto it = spans_.lower_bound(start);
  while (it != spans_.end() && it->first < end) {
    if (--it->second.count == 0) {
      freed += it->second.end - it->first;
      it = spans_.erase(it);
    } else {
      ++it;
    }
  }
  MergeAround(start, end);
  return freed;
}

uint64_t RangeRefs::Referenced(uint64_t start, uint64_t length) const {
  const uint64_t end = start + length;
  uint64_t bytes = 0;
  auto it = spans_.upper_bound(start);
  if (it != spans_.begin()) --it;
  for (; it != spans_.end() && it->first < end; ++it) {
    const uint64_t from = std::max(start, it->first);
    const uint64_t to = std::min(end, it->second.end);
    if (from < to) bytes += to - from;
  }
  return bytes;
}

uint64_t RangeRefs::SharedBytes() const {
  uint64_t bytes = 0;
  for (const auto& [start, span] : spans_) {
    if (span.count > 1) bytes += span.end - start;
  }
  return bytes;
}

}  // namespace ckptfs
