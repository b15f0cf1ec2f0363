// Wall-clock time in the nanoseconds every record and inode time uses.
//
// The kernel's coarse clock, the one it stamps the times of FUSE inodes
// with (the mtime and ctime of writes through its cache, which it owns):
// a file's times then come from one clock, so a time set here is never
// later than one the kernel sets after it (generic/423 saw a ctime before
// a reference file's made earlier, from the finer clock).
#pragma once

#include <time.h>

#include <cstdint>

namespace ckptfs {

inline int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace ckptfs
