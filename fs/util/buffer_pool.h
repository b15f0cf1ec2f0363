// BufferPool: recycles the aligned buffers that reads go through.
//
// A restore reads every run through a fresh buffer. Fresh memory costs more
// than the copy into it: the kernel zero-fills and faults it in page by page
// (a quarter of the daemon's CPU in a restore, measured with perf), and
// keeping freed memory in malloc's heaps instead leaves the daemon far over
// its memory budget. So buffers go back to a bounded shelf when the last
// reference to them drops, and the next read takes one from there.
//
// Runs come in every size up to the largest (a file's last run, the small
// pieces a torch.save writes between tensors), so there is a shelf per size
// class: the capacity, half of it, a quarter, ... down to the smallest
// class. A buffer is taken from the smallest class that holds the size, so
// it is never more than twice the size asked for (docs/benchmarks.md, "Small
// runs on a shelf too": fresh small runs were half the daemon's page faults
// in a restore from RADOS).
//
// Thread-safe (one mutex per shelf, held only to take or return a buffer).
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
  // Pools buffers of `capacity` bytes and, with `classes` > 1, of
  // capacity/2, capacity/4, ... (`classes` sizes in all), keeping at most
  // `max_free` unused of each.
  BufferPool(size_t capacity, size_t max_free, unsigned classes = 1) {
    for (unsigned i = 0; i < classes && (capacity >> i) >= kBlockSize; ++i) {
      auto shelf = std::make_shared<Shelf>();
      shelf->buffer_size = capacity >> i;
      shelf->max_free = max_free;
      shelf->free.reserve(max_free);  // returning a buffer never allocates
      shelves_.push_back(std::move(shelf));
    }
  }

  // A buffer of `size` bytes, contents undefined, its capacity() the size
  // class it came from. Sizes above the capacity, and below half of the
  // smallest class, get a buffer of their own that is not pooled: a pooled
  // one would hold a whole class for a tiny run (a cache of 4 KiB runs
  // would pin many times its size).
  std::shared_ptr<AlignedBuffer> Get(size_t size) {
    const std::shared_ptr<Shelf>* shelf = ShelfFor(size);
    if (shelf == nullptr) return std::make_shared<AlignedBuffer>(size, /*zero=*/false);
    AlignedBuffer buffer;
    {
      MutexLock lock(&(*shelf)->mu);
      if (!(*shelf)->free.empty()) {
        buffer = std::move((*shelf)->free.back());
        (*shelf)->free.pop_back();
      }
    }
    if (buffer.capacity() == 0) {
      buffer = AlignedBuffer((*shelf)->buffer_size, /*zero=*/false);
      allocations_.fetch_add(1, std::memory_order_relaxed);
    }
    buffer.Resize(size);
    // The deleter keeps the shelf alive, so buffers may outlive the pool.
    return std::shared_ptr<AlignedBuffer>(new AlignedBuffer(std::move(buffer)), [shelf = *shelf](AlignedBuffer* b) {
      {
        MutexLock lock(&shelf->mu);
        if (shelf->free.size() < shelf->max_free) shelf->free.push_back(std::move(*b));
      }
      delete b;
    });
  }

  // Pooled buffers made fresh so far (their shelf was empty).
  uint64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }

 private:
  struct Shelf {
    size_t buffer_size = 0;
    size_t max_free = 0;
    Mutex mu;
    std::vector<AlignedBuffer> free GUARDED_BY(mu);
  };

  // The smallest class that holds `size` without wasting more than half of
  // it, or null when none does.
  const std::shared_ptr<Shelf>* ShelfFor(size_t size) const {
    if (shelves_.empty() || size > shelves_.front()->buffer_size) return nullptr;
    for (auto it = shelves_.rbegin(); it != shelves_.rend(); ++it) {
      if (size <= (*it)->buffer_size) return 2 * size >= (*it)->buffer_size ? &*it : nullptr;
    }
    return nullptr;
  }

  std::vector<std::shared_ptr<Shelf>> shelves_;  // largest first; fixed after construction
  std::atomic<uint64_t> allocations_{0};
};

}  // namespace ckptfs
