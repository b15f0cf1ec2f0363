// The FUSE low-level operation table for ckptfs. Each handler checks its
// arguments, calls the core FileSystem (the session's userdata) and sends
// exactly one reply; no filesystem logic lives here.
#pragma once

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include <functional>
#include <optional>

#include "drain_stats.h"
#include "fuse_counters.h"
#include "kernel_channel.h"
#include "page_cache_tracker.h"
#include "stats_report.h"

namespace ckptfs {

struct FuseSettings {
  double entry_timeout = 1.0;  // seconds the kernel may cache names
  double attr_timeout = 1.0;   // seconds the kernel may cache attributes
  bool writeback_cache = true;
  // 1 MiB WRITEs and 64 writeback requests in flight measured best; 4 MiB
  // WRITEs cost the daemon more CPU (docs/tuning.md#fuse-writeback-knobs).
  unsigned max_write = 1 << 20;
  unsigned max_background = 64;  // async writeback requests the kernel keeps in flight
  // Which opens read past the page cache (FOPEN_DIRECT_IO), where the
  // kernel lets mmap use it still (KernelChannel::DirectIoMmap); see
  // PageCacheTracker::Open.
  DirectReads direct_reads = DirectReads::kLargeReadOnly;
  // Whether requests come through FUSE over io_uring (KernelChannel).
  UringMode uring = UringMode::kAuto;
};

// The FileSystem and settings the handlers reach through fuse_req_userdata.
class FileSystem;
struct FuseContext {
  FuseContext(FileSystem* filesystem, const FuseSettings& fuse_settings)
      : fs(filesystem), settings(fuse_settings) {}

  FileSystem* fs;
  // The mounted session, for notifications to the kernel (set once made).
  fuse_session* session = nullptr;
  FuseSettings settings;
  FuseCounters counters;
  KernelChannel channel{settings.uring};
  PageCacheTracker page_cache;
  // The RADOS tier's figures, when the mount drains to one.
  std::function<std::optional<DrainStats>()> tier_stats;
  // The labels of the mount's Prometheus metrics.
  MetricLabels metric_labels;
};

// The mount's figures as the root's stats xattrs serve them; `up` false
// marks the Prometheus file the daemon leaves at exit.
enum class StatsFormat { kText, kJson, kPrometheus };
std::string RenderStats(FuseContext& ctx, StatsFormat format, bool up = true);

fuse_lowlevel_ops MakeFuseOperations();

}  // namespace ckptfs
