// PageCacheTracker: which files the kernel may hold cached pages of, so that
// a write that bypasses the page cache (O_DIRECT) has them dropped only
// where there can be any.
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
// Thread-safe: FUSE worker threads call it from OPEN, RELEASE, FORGET and
// direct WRITE requests; from READ only for a handle opened with O_DIRECT
// that reads through the cache (never on the restore's hot path).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace ckptfs {

class PageCacheTracker {
 public:
  PageCacheTracker() = default;
  PageCacheTracker(const PageCacheTracker&) = delete;
  PageCacheTracker& operator=(const PageCacheTracker&) = delete;

  // A handle of `ino` was opened or released; `direct`: opened with
  // O_DIRECT, so it brings no pages in.
  void Opened(uint64_t ino, bool direct) EXCLUDES(mu_);
  void Released(uint64_t ino, bool direct) EXCLUDES(mu_);
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
    uint32_t caching_handles = 0;  // open handles without O_DIRECT
    bool may_hold_pages = false;
  };

  Mutex mu_;
  // Files with a caching handle open or pages possibly cached; others are
  // left out, so the table holds what the kernel holds at most.
  std::unordered_map<uint64_t, File> files_ GUARDED_BY(mu_);
};

}  // namespace ckptfs
