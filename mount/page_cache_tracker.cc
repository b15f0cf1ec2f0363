// PageCacheTracker: see page_cache_tracker.h.
#include "page_cache_tracker.h"

#include <fcntl.h>

namespace ckptfs {

OpenHandle PageCacheTracker::Open(uint64_t ino, int flags, uint64_t size, DirectReads policy) {
  OpenHandle handle;
  handle.writable = (flags & O_ACCMODE) != O_RDONLY;
  MutexLock lock(&mu_);
  File& file = files_[ino];
  if (flags & O_DIRECT) {
    handle.mode = OpenHandle::Mode::kODirect;
  } else if (policy == DirectReads::kAlways) {
    handle.mode = OpenHandle::Mode::kDirectIo;
  } else if (policy == DirectReads::kLargeReadOnly) {
    const bool large_read = !handle.writable && size >= kDirectReadMinBytes && file.writable_handles == 0;
    const bool beside_direct_readers = handle.writable && file.direct_io_handles > 0;
    if (large_read || beside_direct_readers) handle.mode = OpenHandle::Mode::kDirectIo;
  }
  if (handle.mode != OpenHandle::Mode::kODirect) {
    ++file.caching_handles;  // a direct-I/O handle's mmap uses the cache
    file.may_hold_pages = true;
  }
  if (handle.mode == OpenHandle::Mode::kDirectIo) ++file.direct_io_handles;
  if (handle.writable) ++file.writable_handles;
  return handle;
}

void PageCacheTracker::Released(uint64_t ino, OpenHandle handle) {
  MutexLock lock(&mu_);
  auto it = files_.find(ino);
  if (it == files_.end()) return;
  File& file = it->second;
  const auto drop = [](uint32_t& count) {
    if (count > 0) --count;
  };
  if (handle.mode != OpenHandle::Mode::kODirect) drop(file.caching_handles);
  if (handle.mode == OpenHandle::Mode::kDirectIo) drop(file.direct_io_handles);
  if (handle.writable) drop(file.writable_handles);
  if (file.idle() && !file.may_hold_pages) files_.erase(it);
}

void PageCacheTracker::ReadThroughCache(uint64_t ino) {
  MutexLock lock(&mu_);
  files_[ino].may_hold_pages = true;
}

void PageCacheTracker::Evicted(uint64_t ino) {
  MutexLock lock(&mu_);
  auto it = files_.find(ino);
  if (it != files_.end() && it->second.idle()) files_.erase(it);
}

bool PageCacheTracker::TakeInvalidation(uint64_t ino) {
  MutexLock lock(&mu_);
  auto it = files_.find(ino);
  if (it == files_.end() || !it->second.may_hold_pages) return false;
  if (it->second.caching_handles == 0) {
    it->second.may_hold_pages = false;
    if (it->second.idle()) files_.erase(it);
  }
  return true;
}

}  // namespace ckptfs
