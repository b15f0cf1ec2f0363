// RangeRefs: how many references each byte range of stored data has, so
// that bytes two files share (copy_file_range) are live once, not twice.
//
// A raw stored run's bytes may be referenced by several extents at once: by
// one file, a copy's, the cleaner's re-pointed copies. What occupies the
// device is the union of the referenced ranges. RangeRefs keeps that union
// as disjoint spans with a count each, merged with their neighbours when
// the counts agree, so a segment written in one go and referenced once is
// one span however many runs and files it holds. Each change reports the
// bytes it brought into use or out of it, which is what the segment table
// counts as live. Not thread-safe: the segment table's lock guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace ckptfs {

class RangeRefs {
 public:
  // One more reference to [start, start + length); returns the bytes of it
  // that had none.
  uint64_t Add(uint64_t start, uint64_t length);
  // One reference fewer to [start, start + length); returns the bytes of it
  // left with none. Bytes with no reference are skipped (not an underflow).
  uint64_t Remove(uint64_t start, uint64_t length);
  // Bytes with at least one reference in [start, start + length).
  uint64_t Referenced(uint64_t start, uint64_t length) const;
  // Bytes with more than one reference, anywhere.
  uint64_t SharedBytes() const;
  size_t span_count() const { return spans_.size(); }
  void Clear() { spans_.clear(); }

 private:
  struct Span {
    uint64_t end;
    uint32_t count;  // >= 1
  };
  using Spans = std::map<uint64_t, Span>;  // by start; disjoint
  // Makes `at` a span boundary (splits the span that covers it).
  void SplitAt(uint64_t at);
  // Merges the spans around [start, end) with neighbours of the same count.
  void MergeAround(uint64_t start, uint64_t end);

  Spans spans_;
};

}  // namespace ckptfs
