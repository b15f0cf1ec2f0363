// What the tools read of a mount's daemon: the virtual xattrs its root
// serves, user.ckptfs.stats (text) and user.ckptfs.stats.json. One FUSE
// round trip each, cheap to poll.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "ckptfs/status.h"

namespace ckptfs::tools {

// The whole value of the attribute `name` of `mountpoint`, up to the
// kernel's 64 KiB for an xattr. IOError with the errno when there is none
// (not a ckptfs mount), or it is longer (E2BIG).
Result<std::string> ReadMountAttribute(const std::string& mountpoint, const char* name);

// user.ckptfs.stats.json, parsed; Corruption when it is not a JSON object.
Result<nlohmann::json> ReadMountStats(const std::string& mountpoint);

}  // namespace ckptfs::tools
