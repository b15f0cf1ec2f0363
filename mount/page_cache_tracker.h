// PageCacheTracker: the open handles of each file and which of them go
// through the kernel's page cache: it chooses, per open, whether read()
// and write() bypass the cache (OpenHandle), and knows which files the
// kernel may hold cached pages of, so that a write that bypasses the cache
// has them dropped only where there can be any.
//
// A write that bypasses the cache leaves the pages the kernel cached of its
// range stale (fuse_ops.cc, Write), and the one way to drop them, the
// kernel's inode invalidation, drops the file's attributes too: the
// writer's next write(2) asks for them again. Invalidating after every
// direct write cost 4 KiB O_DIRECT writers 60% of their rate (8 writers:
// 83,600 against 33,500 writes/s). Pages come into the cache only through a
// handle opened without O_DIRECT (reads, mapped pages, the partial pages a
// buffered write reads first), so a file no such handle was opened for
// since its pages were last dropped has none, and its direct writes skip
// the invalidation.
//
// Thread-safe: FUSE worker threads call it from OPEN, CREATE, RELEASE,
// FORGET and direct WRITE requests; from READ only for a handle opened with
// O_DIRECT that reads through the cache (never on the restore's hot path).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace ckptfs {

// Which opens of a file read past the page cache (FOPEN_DIRECT_IO), where
// the kernel lets mmap of such a file use the cache still.
enum class DirectReads {
  kNever,          // -o page_cache, or a kernel that cannot map such a file
  kLargeReadOnly,  // a local store: read-only opens of large files, see Open
  kAlways,         // a RADOS image: every open (it is read-only)
};

// How one open handle reads and writes; it travels in fi->fh.
struct OpenHandle {
  enum class Mode : uint8_t {
    kCaching,   // through the page cache
    kODirect,   // opened O_DIRECT: the kernel bypasses the cache itself
    kDirectIo,  // FOPEN_DIRECT_IO, the daemon's choice: read() and write()
                // bypass the cache, mmap still uses it
  };
  Mode mode = Mode::kCaching;
  bool writable = false;

  uint64_t Encode() const { return static_cast<uint64_t>(mode) | (writable ? 4u : 0u); }
  static OpenHandle Decode(uint64_t fh) {
    return {static_cast<Mode>(fh & 3), (fh & 4) != 0};
  }
};

class PageCacheTracker {
 public:
  // The smallest file whose read-only opens read past the page cache on a
  // local store: a checkpoint shard is read once, front to back, where the
  // cache costs a second copy and its upkeep (1.42-1.50 GB/s against
  // 0.75-0.94 GB/s restoring a scaled 405B checkpoint, issue 39); smaller
  // files, often read again, keep it.
  static constexpr uint64_t kDirectReadMinBytes = 4 << 20;

  PageCacheTracker() = default;
  PageCacheTracker(const PageCacheTracker&) = delete;
  PageCacheTracker& operator=(const PageCacheTracker&) = delete;

  // Chooses how a new handle of `ino` (open(2) `flags`, the file `size`
  // bytes long) reads and writes, and counts it open. Under kLargeReadOnly a
  // read-only open of a file of kDirectReadMinBytes or more reads direct
  // while no handle that may write is open (a writer's dirty pages are seen
  // only through the cache); a writable open of a file with such direct
  // handles open writes direct too, so those readers see its writes at once.
  OpenHandle Open(uint64_t ino, int flags, uint64_t size, DirectReads policy) EXCLUDES(mu_);
  void Released(uint64_t ino, OpenHandle handle) EXCLUDES(mu_);
  // A handle opened with O_DIRECT read through the cache all the same
  // (fcntl took O_DIRECT off it since).
  void ReadThroughCache(uint64_t ino) EXCLUDES(mu_);
  // The kernel let `ino` go (FORGET): its pages went with its inode.
  void Evicted(uint64_t ino) EXCLUDES(mu_);

  // Whether a write to `ino` that bypassed the cache must have the kernel
  // drop cached pages of it; the caller then does. The note is cleared
  // unless a page-cache handle is still open: with none, only a new open
  // can bring pages back, and it notes them again.
  bool TakeInvalidation(uint64_t ino) EXCLUDES(mu_);

 private:
  struct File {
    uint32_t caching_handles = 0;    // open handles that may bring pages in (mmap too)
    uint32_t writable_handles = 0;   // open for writing, in any mode
    uint32_t direct_io_handles = 0;  // opened kDirectIo
    bool may_hold_pages = false;
    bool idle() const { return caching_handles == 0 && writable_handles == 0 && direct_io_handles == 0; }
  };

  Mutex mu_;
  // Files with a handle open or pages possibly cached; others are left
  // out, so the table holds what the kernel holds at most.
  std::unordered_map<uint64_t, File> files_ GUARDED_BY(mu_);
};

}  // namespace ckptfs
