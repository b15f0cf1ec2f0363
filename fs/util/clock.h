// Wall-clock time in the nanoseconds every record and inode time uses.
#pragma once

#include <time.h>

#include <cstdint>

namespace ckptfs {

inline int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace ckptfs
