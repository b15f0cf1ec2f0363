// The daemon's counters rendered for people (text) and scripts (JSON). They
// are served as the virtual xattrs user.ckptfs.stats and
// user.ckptfs.stats.json of the mount's root, which ckptfs-stat reads.
#pragma once

#include <optional>
#include <string>

#include "ckptfs/filesystem.h"
#include "drain_stats.h"
#include "fuse_counters.h"

namespace ckptfs {

inline constexpr const char* kStatsXattr = "user.ckptfs.stats";
inline constexpr const char* kStatsJsonXattr = "user.ckptfs.stats.json";
inline constexpr const char* kStatsPrometheusXattr = "user.ckptfs.stats.prom";

// How requests reach the daemon (KernelChannel): "dev_fuse" or
// "io_uring", and how many came through the ring.
struct ChannelStatus {
  std::string name = "dev_fuse";
  uint64_t ring_requests = 0;
};

// What each Prometheus metric carries as labels.
struct MetricLabels {
  std::string mount;  // the mountpoint
  std::string store;  // the store: a path, or rados:POOL/NAME
};

// `tier`, when the mount drains to RADOS, adds a "tier" object (JSON) or
// tier.* lines (text).
std::string RenderStatsText(const StoreStats& store, const FuseCounters& fuse, const ChannelStatus& channel,
                            const std::optional<DrainStats>& tier = std::nullopt);
std::string RenderStatsJson(const StoreStats& store, const FuseCounters& fuse, const ChannelStatus& channel,
                            const std::optional<DrainStats>& tier = std::nullopt);
// The same figures in Prometheus's text format, named ckptfs_* with the
// unit last and _total on counters (store.bytes_written is
// ckptfs_written_bytes_total; tier.behind_ms is ckptfs_tier_behind_seconds),
// each with the labels; `up` is false for the file the daemon leaves at exit.
std::string RenderStatsPrometheus(const StoreStats& store, const FuseCounters& fuse, const ChannelStatus& channel,
                                  const std::optional<DrainStats>& tier, const MetricLabels& labels, bool up = true);

}  // namespace ckptfs
