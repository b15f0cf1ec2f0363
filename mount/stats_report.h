// The daemon's counters rendered for people (text) and scripts (JSON). They
// are served as the virtual xattrs user.ckptfs.stats and
// user.ckptfs.stats.json of the mount's root, which ckptfs-stat reads.
#pragma once

#include <string>

#include "ckptfs/filesystem.h"
#include "fuse_counters.h"

namespace ckptfs {

inline constexpr const char* kStatsXattr = "user.ckptfs.stats";
inline constexpr const char* kStatsJsonXattr = "user.ckptfs.stats.json";

std::string RenderStatsText(const StoreStats& store, const FuseCounters& fuse);
std::string RenderStatsJson(const StoreStats& store, const FuseCounters& fuse);

}  // namespace ckptfs
