// SequentialReads: tells, file by file, whether reads follow one another and
// which bytes past them a reader will ask for next, for RunPrefetcher.
//
// Why: a mount of a RADOS image opens files for direct I/O, and the kernel
// sends a read() as 1 MiB requests one after the other, each waiting for a
// RADOS round trip; nothing reads ahead. A file read front to back (a
// restore) therefore had one RADOS read in flight per reader.
//
// A read continues a stream when it starts where the file's last read ended
// (or at offset 0). The window ahead of a stream is refilled once less than
// half of it is left, so each refill asks for several runs at once, as the
// kernel's readahead does; any other read restarts the stream there.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "util/mutex.h"

namespace ckptfs {

struct ReadAheadRange {
  uint64_t offset = 0;
  uint64_t length = 0;  // 0: nothing to load ahead
};

class SequentialReads {
 public:
  // Reads ahead up to `window_bytes` past a stream's last read.
  explicit SequentialReads(uint64_t window_bytes) : window_(window_bytes) {}

  // Notes a read of [offset, offset + length) of inode `ino`, a file of
  // `file_size` bytes, and returns the bytes to load ahead of it; none
  // unless `may_load`.
  ReadAheadRange Next(uint64_t ino, uint64_t offset, uint64_t length, uint64_t file_size,
                      bool may_load) EXCLUDES(mu_);

 private:
  struct Stream {
    uint64_t next = 0;   // where the last read ended
    uint64_t ahead = 0;  // loaded (or asked for) up to here
  };
  // Streams remembered at most; a restore reads a few files per rank at a
  // time. Past it, an arbitrary one is forgotten (it restarts on its next read).
  static constexpr size_t kMaxStreams = 1024;

  const uint64_t window_;
  Mutex mu_;
  std::unordered_map<uint64_t, Stream> streams_ GUARDED_BY(mu_);  // by inode
};

}  // namespace ckptfs
