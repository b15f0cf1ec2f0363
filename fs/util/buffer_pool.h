// BufferPool: recycles the aligned buffers that reads go through.
//
// A restore reads every run through a fresh 1 MiB buffer. Fresh memory
// costs more than the copy into it:
// the kernel zero-fills and faults it in page by page (a quarter of the
// daemon's CPU in a restore, measured with perf), and keeping freed memory
// in malloc's heaps instead leaves the daemon far over its memory budget.
// So buffers of one size class go back to a bounded shelf when the last
// reference to them drops, and the next read takes one from there.
//
// Thread-safe (one mutex, held only to take or return a buffer).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "util/aligned_buffer.h"
#include "util/mutex.h"

namespace ckptfs {

class BufferPool {
 public:
  // Pools buffers of `capacity` bytes, keeping at most `max_free` unused.
  BufferPool(size_t capacity, size_t max_free)
      : capacity_(capacity), shelf_(std::make_shared<Shelf>()) {
    shelf_->max_free = max_free;
    shelf_->free.reserve(max_free);  // returning a buffer never allocates
  }

  // A buffer of `size` bytes, contents undefined. Sizes above the capacity,
  // and below half of it, get a buffer of their own that is not pooled: a
  // pooled one would hold a whole capacity for a small run (a cache of 4 KiB
  // runs would pin 256 times its size).
  std::shared_ptr<AlignedBuffer> Get(size_t size) {
    if (size > capacity_ || 2 * size < capacity_) {
      return std::make_shared<AlignedBuffer>(size, /*zero=*/false);
    }
    AlignedBuffer buffer;
    {
      MutexLock lock(&shelf_->mu);
      if (!shelf_->free.empty()) {
        buffer = std::move(shelf_->free.back());
        shelf_->free.pop_back();
      }
    }
    if (buffer.capacity() == 0) {
      buffer = AlignedBuffer(capacity_, /*zero=*/false);
      allocations_.fetch_add(1, std::memory_order_relaxed);
    }
    buffer.Resize(size);
    // The deleter keeps the shelf alive, so buffers may outlive the pool.
    return std::shared_ptr<AlignedBuffer>(
        new AlignedBuffer(std::move(buffer)), [shelf = shelf_](AlignedBuffer* b) {
          {
            MutexLock lock(&shelf->mu);
            if (shelf->free.size() < shelf->max_free) shelf->free.push_back(std::move(*b));
          }
          delete b;
        });
  }

 private:
  struct Shelf {
    Mutex mu;
    std::vector<AlignedBuffer> free GUARDED_BY(mu);
    size_t max_free = 0;
  };
  const size_t capacity_;
  const std::shared_ptr<Shelf> shelf_;
  std::atomic<uint64_t> allocations_{0};

 public:
  // Pooled-size buffers made fresh so far (the shelf was empty).
  uint64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }
};

}  // namespace ckptfs
