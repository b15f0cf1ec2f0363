// SequentialReads: see sequential_reads.h.
#include "segment/sequential_reads.h"

#include <algorithm>

namespace ckptfs {

ReadAheadRange SequentialReads::Next(uint64_t ino, uint64_t offset, uint64_t length,
                                     uint64_t file_size, bool may_load) {
  const uint64_t end = offset + length;
  MutexLock lock(&mu_);
  auto it = streams_.find(ino);
  if (it == streams_.end()) {
    if (streams_.size() >= kMaxStreams) streams_.erase(streams_.begin());
    it = streams_.emplace(ino, Stream{}).first;
  }
  Stream& s = it->second;
  const bool continues = offset == s.next;
  s.next = end;
  if (!continues) {
    s.ahead = end;  // what was loaded ahead of the old stream is no help
    if (offset != 0) return {};  // a read from the start begins a stream
  }
  // Refilled once less than half the window is left ahead of the reader.
  const uint64_t from = std::max(end, s.ahead);
  if (!may_load) {
    s.ahead = from;
    return {};
  }
  if (from - end >= window_ / 2) return {};
  const uint64_t to = std::min(file_size, end + window_);
  if (from >= to) return {};
  s.ahead = to;
  return {from, to - from};
}

}  // namespace ckptfs
