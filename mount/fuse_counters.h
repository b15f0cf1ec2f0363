// FuseCounters: what the kernel asked of the daemon, by operation, plus the
// size distribution of write requests (how well the kernel's writeback
// cache coalesces). Lock-free: handlers bump relaxed atomics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace ckptfs {

enum class FuseOp : int {
  kLookup, kForget, kGetAttr, kSetAttr, kReadLink, kMknod, kMkdir, kUnlink, kRmdir, kSymlink,
  kRename, kLink, kOpen, kCreate, kRead, kWrite, kFlush, kRelease, kFsync, kOpenDir, kReadDir,
  kReadDirPlus, kReleaseDir, kFsyncDir, kStatFs, kSetXattr, kGetXattr, kListXattr, kRemoveXattr,
  kFallocate, kBatchForget, kCopyFileRange, kCount
};

const char* FuseOpName(FuseOp op);

struct FuseCounters {
  // Write request sizes: up to 4 KiB, 64 KiB, 256 KiB, 1 MiB, larger.
  static constexpr int kSizeBuckets = 5;
  static constexpr uint64_t kBucketLimits[kSizeBuckets - 1] = {4096, 65536, 262144, 1048576};

  std::array<std::atomic<uint64_t>, static_cast<int>(FuseOp::kCount)> requests{};
  std::atomic<uint64_t> error_replies{0};  // replies carrying an errno
  std::array<std::atomic<uint64_t>, kSizeBuckets> write_sizes{};

  void Count(FuseOp op) { requests[static_cast<int>(op)].fetch_add(1, std::memory_order_relaxed); }
  void CountError() { error_replies.fetch_add(1, std::memory_order_relaxed); }
  void CountWrite(uint64_t size) {
    int b = 0;
    while (b < kSizeBuckets - 1 && size > kBucketLimits[b]) ++b;
    write_sizes[b].fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace ckptfs
