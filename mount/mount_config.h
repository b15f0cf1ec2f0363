// MountConfig: the daemon's command line, ckptfs's own -o options pulled
// out before libfuse sees the rest (libfuse then refuses what neither knows).
#pragma once

#include <string>
#include <string_view>

#include "ckptfs/options.h"
#include "ckptfs/status.h"
#include "fuse_ops.h"

namespace ckptfs {

struct MountConfig {
  std::string store_path;
  MountOptions mount;
  FuseSettings fuse;
  std::string log_level = "info";
  std::string log_file;  // empty: stderr in the foreground, syslog when daemonized
  bool allow_nonempty = false;
  unsigned read_ahead_kb = 1024;  // 0 leaves the kernel's default
  // How long to wait for a store still held by a daemon that is flushing
  // it after an unmount (see RetryWhileBusy).
  double busy_wait_seconds = 60;
  // -o tier=rados:POOL/NAME: drain the store to that RADOS image (empty:
  // no tier), reaching the cluster through ceph_conf (empty: $CEPH_CONF) as
  // client ceph_id, no RADOS call waiting longer than rados_timeout.
  std::string tier;
  std::string ceph_conf;
  std::string ceph_id;
  unsigned rados_timeout_seconds = 30;
  // At unmount, how long the drain may take to send the last commit.
  double unmount_drain_seconds = 60;
  // The drain holds back while the mount takes a burst (DrainOptions), at
  // most this long; 0 drains at once, always.
  double drain_defer_seconds = 60;
  // -o drain_write=SIZE: the drain's RADOS write (DrainOptions::chunk_bytes);
  // 0: its default.
  uint64_t drain_write_bytes = 0;
  // -o cache=PATH, with a rados:POOL/NAME source: a local file that keeps
  // what the mount reads from RADOS (ImageCache).
  std::string cache;
  // -o cache_size=SIZE: the most the cache file grows to; 0: until the
  // filesystem under it is full.
  uint64_t cache_bytes = 0;
  // -o metrics_file=PATH: the mount's Prometheus metrics, rewritten every
  // kMetricsInterval (MetricsFile); empty: none.
  std::string metrics_file;
};

// How often -o metrics_file= is rewritten: well inside the 15 s and more
// that Prometheus scrapes node_exporter at.
inline constexpr int kMetricsIntervalMs = 5000;

// What a mount of a RADOS image loads ahead of a sequential reader unless
// -o prefetch= says otherwise (MountOptions::prefetch_bytes).
inline constexpr uint64_t kImagePrefetchBytes = 4ull << 20;

// Parses and removes ckptfs's options from `args`. Invalid names the option.
Status ParseMountConfig(fuse_args* args, MountConfig* config);

// Whether `name` (without "=VALUE") is one of ckptfs's own options, which
// the daemon takes at start and which a remount cannot change.
bool IsCkptfsOption(std::string_view name);

// Help text for ckptfs's own options.
const char* MountOptionsHelp();

}  // namespace ckptfs
