// RunCache implementation: an LRU bounded by bytes.
#include "segment/run_cache.h"

namespace ckptfs {

RunCache::Run RunCache::Find(uint64_t addr, uint32_t crc) {
  MutexLock lock(&mu_);
  Run run = FindLocked(addr, crc);
  ++(run ? hits_ : misses_);
  return run;
}

RunCache::Run RunCache::FindLocked(uint64_t addr, uint32_t crc) {
  auto it = entries_.find(addr);
  if (it == entries_.end() || it->second.crc != crc) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.run;
}

void RunCache::Insert(uint64_t addr, uint32_t crc, Run run) {
  MutexLock lock(&mu_);
  InsertLocked(addr, crc, std::move(run));
}

Result<RunCache::Run> RunCache::FindOrLoad(uint64_t addr, uint32_t crc,
                                           const std::function<Result<Run>()>& load, bool hint) {
  std::shared_ptr<Load> mine;
  {
    MutexLock lock(&mu_);
    while (true) {
      if (Run run = FindLocked(addr, crc)) {
        ++hits_;
        return run;
      }
      auto it = loading_.find(addr);
      if (it == loading_.end() || it->second->crc != crc) break;
      ++hits_;  // read from the device once, by the caller loading it
      std::shared_ptr<Load> theirs = it->second;
      while (!theirs->done) loaded_.Wait(&mu_);
      if (theirs->status.ok()) return theirs->run;
      if (!theirs->hint) return theirs->status;
      // A failed prefetch: no hit after all. Look again (another caller may
      // be loading the run by now).
      --hits_;
    }
    // A load of another crc (the segment's earlier life) is not ours to
    // share; this one replaces it as the one later callers wait for.
    ++misses_;
    mine = std::make_shared<Load>();
    mine->crc = crc;
    mine->hint = hint;
    loading_[addr] = mine;
  }
  Result<Run> loaded = load();
  MutexLock lock(&mu_);
  mine->done = true;
  if (loaded.ok()) {
    mine->run = *loaded;
    InsertLocked(addr, crc, *loaded);
  } else {
    mine->status = loaded.status();
  }
  if (auto it = loading_.find(addr); it != loading_.end() && it->second == mine) loading_.erase(it);
  loaded_.NotifyAll();
  return loaded;
}

void RunCache::InsertLocked(uint64_t addr, uint32_t crc, Run run) {
  if (capacity_ == 0 || run->capacity() > capacity_) return;
  if (auto old = entries_.find(addr); old != entries_.end()) {
    if (old->second.crc == crc) return;
    bytes_ -= old->second.run->capacity();  // a stale copy from the segment's past
    lru_.erase(old->second.lru);
    entries_.erase(old);
  }
  lru_.push_front(addr);
  bytes_ += run->capacity();
  entries_[addr] = Entry{std::move(run), crc, lru_.begin()};
  EvictLocked();
}

void RunCache::EvictLocked() {
  while (bytes_ > capacity_ && !lru_.empty()) {
    auto it = entries_.find(lru_.back());
    bytes_ -= it->second.run->capacity();
    entries_.erase(it);
    lru_.pop_back();
  }
}

void RunCache::Invalidate(uint64_t begin, uint64_t end) {
  MutexLock lock(&mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->first >= begin && it->first < end) {
      bytes_ -= it->second.run->capacity();
      lru_.erase(it->second.lru);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

uint64_t RunCache::hits() const {
  MutexLock lock(&mu_);
  return hits_;
}

uint64_t RunCache::misses() const {
  MutexLock lock(&mu_);
  return misses_;
}

}  // namespace ckptfs
