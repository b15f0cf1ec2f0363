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
// class: the capacity, then a quarter of it, an eighth, ... down to the
// smallest class. A size takes the smallest class that holds it without
// wasting more than half, except that the largest class takes every size
// from a quarter of it up. A restore's runs are mostly between half a run
// and a whole one; split over two classes, the cache's evictions returned
// buffers of one class while loads wanted the other, one shelf overflowed
// while the other ran dry, and over six restores 70% of the half-size runs
// got fresh memory, which costs far more than its copy
// (docs/tuning.md#run-buffer-size-classes: one class for them made those
// restores 1.75x faster for half the daemon's CPU; fresh small runs were
// half the daemon's page faults in a restore from RADOS).
//
// The shelves together keep at most `max_free` buffers of the largest
// class's worth of bytes, whichever classes they hold, so adding classes
// does not add idle memory (16 MiB for the runs of a DataLog).
//
// Thread-safe: one mutex for the shelves, held only to take or return a
// buffer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "util/aligned_buffer.h"
#include "util/mutex.h"

namespace ckptfs {

class BufferPool {
 public:
  // Pools buffers of `capacity` bytes and, with `classes` > 1, of
  // capacity/4, capacity/8, ... (`classes` sizes in all), keeping at most
  // `max_free` unused of each and `max_free` * `capacity` bytes unused in
  // all.
  BufferPool(size_t capacity, size_t max_free, unsigned classes = 1) : shelves_(std::make_shared<Shelves>()) {
    shelves_->max_free_each = max_free;
    shelves_->max_idle_bytes = max_free * capacity;
    for (unsigned i = 0; i < classes; ++i) {
      const size_t size = i == 0 ? capacity : capacity >> (i + 1);
      if (size < kBlockSize) break;
      shelves_->sizes.push_back(size);
    }
    MutexLock lock(&shelves_->mu);
    shelves_->free.resize(shelves_->sizes.size());
    // Returning a buffer never allocates.
    for (auto& shelf : shelves_->free) shelf.reserve(max_free);
  }

  // A buffer of `size` bytes, contents undefined, its capacity() the size
  // class it came from. Sizes above the capacity, and below what the
  // smallest class takes (half of it; a quarter when the largest class is
  // the only one), get a buffer of their own that is not pooled: a pooled
  // one would hold a whole class for a tiny run (a cache of 4 KiB runs
  // would pin many times its size).
  std::shared_ptr<AlignedBuffer> Get(size_t size) {
    const std::optional<size_t> cls = ClassFor(size);
    if (!cls) return std::make_shared<AlignedBuffer>(size, /*zero=*/false);
    AlignedBuffer buffer = shelves_->Take(*cls);
    if (buffer.capacity() == 0) {
      buffer = AlignedBuffer(shelves_->sizes[*cls], /*zero=*/false);
      allocations_.fetch_add(1, std::memory_order_relaxed);
    }
    buffer.Resize(size);
    // The deleter keeps the shelves alive, so buffers may outlive the pool.
    return std::shared_ptr<AlignedBuffer>(new AlignedBuffer(std::move(buffer)),
                                          [shelves = shelves_, cls = *cls](AlignedBuffer* b) {
                                            shelves->Return(cls, b);
                                            delete b;
                                          });
  }

  // Pooled buffers made fresh so far (their shelf was empty).
  uint64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }

 private:
  struct Shelves {
    std::vector<size_t> sizes;  // of each class, largest first; fixed after construction
    size_t max_free_each = 0;
    size_t max_idle_bytes = 0;
    Mutex mu;
    std::vector<std::vector<AlignedBuffer>> free GUARDED_BY(mu);  // one shelf per class
    size_t idle_bytes GUARDED_BY(mu) = 0;

    // A buffer off class `cls`'s shelf, or an empty one when it has none.
    AlignedBuffer Take(size_t cls) {
      MutexLock lock(&mu);
      if (free[cls].empty()) return AlignedBuffer();
      AlignedBuffer buffer = std::move(free[cls].back());
      free[cls].pop_back();
      idle_bytes -= sizes[cls];
      return buffer;
    }
    // Shelves `*b` (leaving it empty) unless the shelf or the bytes idle on
    // all of them are at their bound.
    void Return(size_t cls, AlignedBuffer* b) {
      MutexLock lock(&mu);
      if (free[cls].size() >= max_free_each || idle_bytes + sizes[cls] > max_idle_bytes) return;
      free[cls].push_back(std::move(*b));
      idle_bytes += sizes[cls];
    }
  };

  // The smallest class that holds `size` without wasting more than half of
  // it (three quarters for the largest class), or none.
  std::optional<size_t> ClassFor(size_t size) const {
    const std::vector<size_t>& sizes = shelves_->sizes;
    if (sizes.empty() || size > sizes.front()) return std::nullopt;
    for (size_t i = sizes.size(); i-- > 0;) {
      if (size > sizes[i]) continue;
      const size_t waste_bound = i == 0 ? 4 : 2;  // the class at most this many times the size
      return waste_bound * size >= sizes[i] ? std::optional<size_t>(i) : std::nullopt;
    }
    return std::nullopt;
  }

  const std::shared_ptr<Shelves> shelves_;
  std::atomic<uint64_t> allocations_{0};
};

}  // namespace ckptfs
