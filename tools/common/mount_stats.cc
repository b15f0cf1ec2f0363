// ReadMountAttribute, ReadMountStats: see mount_stats.h.
#include "common/mount_stats.h"

#include <sys/xattr.h>

#include <cerrno>

namespace ckptfs::tools {

Result<std::string> ReadMountAttribute(const std::string& mountpoint, const char* name) {
  // The stats grow with the mount's features and tier; ERANGE means ask
  // again with more room (the kernel answers E2BIG past 64 KiB).
  std::string value;
  for (size_t size = 16384;; size *= 2) {
    value.resize(size);
    const ssize_t n = getxattr(mountpoint.c_str(), name, value.data(), size);
    if (n >= 0) {
      value.resize(static_cast<size_t>(n));
      return value;
    }
    if (errno != ERANGE) {
      return Status::IOError(mountpoint + " (is it a ckptfs mount?) has no " + name, errno);
    }
  }
}

Result<nlohmann::json> ReadMountStats(const std::string& mountpoint) {
  CKPTFS_ASSIGN_OR_RETURN(std::string text, ReadMountAttribute(mountpoint, "user.ckptfs.stats.json"));
  nlohmann::json stats = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!stats.is_object()) return Status::Corruption(mountpoint + ": the daemon's stats are not JSON");
  return stats;
}

}  // namespace ckptfs::tools
