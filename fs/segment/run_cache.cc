// RunCache implementation: an LRU bounded by bytes.
#include "segment/run_cache.h"

#include <optional>

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
  while (true) {
    std::shared_ptr<const Load> theirs;
    std::shared_ptr<const Load> mine;
    // Of our own load, made only for one: a promise allocates its state.
    std::optional<std::promise<Result<Run>>> promise;
    {
      MutexLock lock(&mu_);
      if (Run run = FindLocked(addr, crc)) {
        ++hits_;
        return run;
      }
      auto it = loading_.find(addr);
      if (it != loading_.end() && it->second->crc == crc) {
        ++hits_;  // read from the device once, by the caller loading it
        theirs = it->second;
      } else {
        // A load of another crc (the segment's earlier life) is not ours to
        // share; this one replaces it as the one later callers wait for.
        ++misses_;
        promise.emplace();
        mine = std::make_shared<const Load>(crc, hint, promise->get_future().share());
        loading_[addr] = mine;
      }
    }
    if (theirs) {
      const Result<Run>& result = theirs->result.get();
      if (result.ok() || !theirs->hint) return result;
      // A failed prefetch: no hit after all. Look again (another caller may
      // be loading the run by now).
      MutexLock lock(&mu_);
      --hits_;
      continue;
    }
    // The load's end, however it ends: cached if it worked, and no longer
    // the one to wait for. Something that throws on the way (bad_alloc)
    // fails the waiters with the same exception.
    auto finish = [&](const Result<Run>* loaded) {
      MutexLock lock(&mu_);
      if (loaded != nullptr && loaded->ok()) InsertLocked(addr, crc, **loaded);
      if (auto it = loading_.find(addr); it != loading_.end() && it->second == mine) loading_.erase(it);
    };
    bool delivered = false;
    try {
      Result<Run> loaded = load();
      finish(&loaded);
      promise->set_value(loaded);
      delivered = true;
      return loaded;
    } catch (...) {
      if (!delivered) {
        finish(nullptr);
        promise->set_exception(std::current_exception());
      }
      throw;
    }
  }
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
