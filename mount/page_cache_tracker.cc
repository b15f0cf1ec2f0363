// PageCacheTracker: see page_cache_tracker.h.
#include "page_cache_tracker.h"

namespace ckptfs {

void PageCacheTracker::Opened(uint64_t ino, bool direct) {
  if (direct) return;
  MutexLock lock(&mu_);
  File& file = files_[ino];
  ++file.caching_handles;
  file.may_hold_pages = true;
}

void PageCacheTracker::Released(uint64_t ino, bool direct) {
  if (direct) return;
  MutexLock lock(&mu_);
  auto it = files_.find(ino);
  if (it != files_.end() && it->second.caching_handles > 0) --it->second.caching_handles;
}

void PageCacheTracker::ReadThroughCache(uint64_t ino) {
  MutexLock lock(&mu_);
  files_[ino].may_hold_pages = true;
}

void PageCacheTracker::Evicted(uint64_t ino) {
  MutexLock lock(&mu_);
  auto it = files_.find(ino);
  if (it != files_.end() && it->second.caching_handles == 0) files_.erase(it);
}

bool PageCacheTracker::TakeInvalidation(uint64_t ino) {
  MutexLock lock(&mu_);
  auto it = files_.find(ino);
  if (it == files_.end() || !it->second.may_hold_pages) return false;
  if (it->second.caching_handles == 0) files_.erase(it);
  return true;
}

}  // namespace ckptfs
