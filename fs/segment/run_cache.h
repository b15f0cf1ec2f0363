// RunCache: recently verified stored runs, kept in memory so that reading a
// run in several pieces (the kernel asks for 128 KiB-1 MiB at a time, a run
// holds up to 1 MiB) reads and checksums it from the device once, not once
// per piece.
//
// Readers that miss the same run at the same time share one load of it
// (FindOrLoad): the kernel asks for neighbouring pieces of a file at once,
// and a run straddling two of them was read from the device twice.
//
// The capacity bounds the memory the runs hold: a run counts its buffer's
// capacity, which for a pooled buffer is its size class (util/buffer_pool.h),
// and a lent one its size.
//
// Thread-safe (one mutex, held only for map updates, never during I/O).
// Entries are immutable once inserted; a segment that gets new contents must
// be invalidated first (DataLog does this when it reuses a segment).
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "ckptfs/status.h"
#include "io/block_device.h"
#include "util/aligned_buffer.h"
#include "util/mutex.h"

namespace ckptfs {

// A run's bytes in memory, whoever holds them: a buffer of the store's own
// (most often pooled, util/buffer_pool.h), or memory a device lent
// (BlockDevice::ReadLent: a RADOS reply, used where it arrived).
class RunBytes {
 public:
  // All of `buffer`; it counts its capacity.
  explicit RunBytes(std::shared_ptr<const AlignedBuffer> buffer)
      : data_(buffer->data()), size_(buffer->size()), capacity_(buffer->capacity()), owner_(std::move(buffer)) {}
  explicit RunBytes(LentBytes lent)
      : data_(lent.data), size_(lent.size), capacity_(lent.size), owner_(std::move(lent.owner)) {}

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // The memory it holds, which the cache's capacity bounds.
  size_t capacity() const { return capacity_; }

 private:
  const char* data_;
  size_t size_;
  size_t capacity_;
  std::shared_ptr<const void> owner_;
};

class RunCache {
 public:
  using Run = std::shared_ptr<const RunBytes>;

  explicit RunCache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // The cached copy of the run stored at `addr` with checksum `crc`, or
  // null. The checksum is part of the key: a run of the same address from a
  // segment's earlier life can never be returned for a newer one.
  Run Find(uint64_t addr, uint32_t crc);
  void Insert(uint64_t addr, uint32_t crc, Run run);
  // The cached run, or the one `load` returns, which is then cached. A
  // caller that misses while another caller's load of the same run (address
  // and checksum) is in flight waits for that load and gets its result,
  // error included, instead of loading again. `load` runs without the lock.
  // A `hint` load (a prefetch, which nobody asked for) that fails is not
  // shared: its waiters load the run themselves and see their own result.
  Result<Run> FindOrLoad(uint64_t addr, uint32_t crc, const std::function<Result<Run>()>& load,
                         bool hint = false);
  // Drops every run stored in [begin, end).
  void Invalidate(uint64_t begin, uint64_t end);

  // Hits: runs returned without a load of their own (cached, or another
  // caller's load); misses: loads.
  uint64_t hits() const;
  uint64_t misses() const;

 private:
  struct Entry {
    Run run;
    uint32_t crc;
    std::list<uint64_t>::iterator lru;
  };
  // A load in flight, shared by the callers that wait for it: set once,
  // before it is shared, but for its result, which the loader delivers
  // through the future (so a waiter waits without the lock).
  struct Load {
    Load(uint32_t crc, bool hint, std::shared_future<Result<Run>> result)
        : crc(crc), hint(hint), result(std::move(result)) {}
    const uint32_t crc;
    const bool hint;
    const std::shared_future<Result<Run>> result;
  };
  Run FindLocked(uint64_t addr, uint32_t crc) REQUIRES(mu_);  // counts neither hit nor miss
  void InsertLocked(uint64_t addr, uint32_t crc, Run run) REQUIRES(mu_);
  void EvictLocked() REQUIRES(mu_);

  const uint64_t capacity_;
  mutable Mutex mu_;
  std::unordered_map<uint64_t, Entry> entries_ GUARDED_BY(mu_);
  std::list<uint64_t> lru_ GUARDED_BY(mu_);  // most recent first
  std::unordered_map<uint64_t, std::shared_ptr<const Load>> loading_ GUARDED_BY(mu_);  // by address
  uint64_t bytes_ GUARDED_BY(mu_) = 0;
  uint64_t hits_ GUARDED_BY(mu_) = 0;
  uint64_t misses_ GUARDED_BY(mu_) = 0;
};

}  // namespace ckptfs
