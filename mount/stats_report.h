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

// `tier`, when the mount drains to RADOS, adds a "tier" object (JSON) or
// tier.* lines (text).
std::string RenderStatsText(const StoreStats& store, const FuseCounters& fuse,
                            const std::optional<DrainStats>& tier = std::nullopt);
std::string RenderStatsJson(const StoreStats& store, const FuseCounters& fuse,
                            const std::optional<DrainStats>& tier = std::nullopt);

}  // namespace ckptfs
