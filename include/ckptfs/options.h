// Options for formatting and mounting a ckptfs store.
#pragma once

#include <cstdint>
#include <string>

namespace ckptfs {

struct FormatOptions {
  // Bytes to format; 0 means the whole existing file or device. A regular
  // file is created or grown to this size.
  uint64_t size = 0;
  uint64_t segment_size = 32ull << 20;
  // Overwrite a store that already holds a ckptfs superblock.
  bool force = false;
  // Leave a regular file sparse instead of allocating all of it: its blocks
  // are then taken as segments are first used, and writes fail with ENOSPC
  // once the filesystem under it is full (the mount stays up).
  bool sparse = false;
};

// How reads move a file's atime, as the mount options of the same names
// say on any Linux filesystem (the kernel leaves atime to a FUSE daemon).
// relatime, the kernel's default: when atime is not newer than mtime or
// ctime (no read since the last change), or a day old. strictatime: on
// every read. noatime: never.
enum class AtimePolicy { kRelatime, kStrictatime, kNoatime };

struct MountOptions {
  uint64_t memory_budget = 512ull << 20;  // segment buffers in flight
  unsigned flusher_threads = 2;
  // A background commit makes data durable at least this often, as ext4's
  // journal commit does; fsync commits at once.
  uint32_t commit_interval_ms = 5000;
  bool direct_io = true;
  bool use_uring = true;
  // The metadata log is compacted (rewritten as a snapshot of the namespace)
  // once it holds this many bytes and four times the last snapshot's size.
  uint64_t compact_log_bytes = 64ull << 20;
  // Background cleaning moves at most this many bytes per second (0: no
  // limit); foreground cleaning, when a write would fail, is not limited.
  uint64_t clean_rate_bytes = 512ull << 20;
  // Compression of file data for files that do not say otherwise (a
  // directory's user.ckptfs.compress xattr, inherited by what is created in
  // it, overrides this): "none" or "zstd[:LEVEL[:FILTER]]", see
  // docs/user-guide.md. A quarter of memory_budget holds written data
  // waiting for the compressor threads.
  std::string compress = "none";
  unsigned compressor_threads = 2;
  // When that memory is full: false waits for the compressors (every run is
  // compressed; the burst slows to their speed), true stores the write raw
  // at once (the burst keeps its speed; the ratio drops).
  bool compress_backlog_raw = false;
  // Compress later instead: writes are stored raw at full speed, and once
  // the mount has been idle for a second the cleaner rewrites the raw data
  // of compressing files compressed (compress_when=idle).
  bool compress_when_idle = false;
  // Remember which bytes of each segment were written since the store was
  // opened, so FileSystem::committed_images() can say what a copy of each
  // commit needs (a tier that drains the store sets it). Costs a short lock
  // per device write.
  bool track_committed_images = false;
  // Serve the store without writing a byte to it. The device is opened
  // read-only under a shared lock, so any number of read-only opens may
  // share a store but none may share it with a read-write one (a writer
  // reuses segments a reader may still be reading). The log is replayed,
  // then nothing is committed, cleaned, compressed, compacted or freed:
  // inodes a crash left with no name stay until a read-write mount frees
  // them. Every change fails with Status::ReadOnly (EROFS at the mount).
  bool read_only = false;
  // Verified runs kept in memory, for reads that take a run in several
  // pieces (a run holds up to 1 MiB of a file, a FUSE read asks for up to
  // 1 MiB, seldom on the same bounds). A run or two per reader is all a
  // restore reuses; more only cycles runs through more memory, resident
  // beside the segment buffers (docs/tuning.md#run-cache).
  uint64_t run_cache_bytes = 16ull << 20;
  // Bytes to load ahead of a reader that reads a file front to back, on
  // prefetch_threads threads (0: none). For stores whose reads wait long,
  // a RADOS image's: a read-only mount of one reads with direct I/O, which
  // the kernel does not read ahead for.
  uint64_t prefetch_bytes = 0;
  unsigned prefetch_threads = 8;
  // Whether writes set the file's mtime and ctime. A FUSE mount with the
  // kernel's writeback cache turns it off: the kernel owns those times
  // then, stamps them at write(2) and sends them (a SETATTR) when it writes
  // the inode back; the stamp of a write reaching the store later, by a
  // tick, would replace the kernel's, so the file's times changed at a
  // remount.
  bool writes_set_mtime = true;
  // What FileSystem::NoteAccess does to atime; nodiratime leaves
  // directories' alone.
  AtimePolicy atime = AtimePolicy::kRelatime;
  bool nodiratime = false;
};

}  // namespace ckptfs
