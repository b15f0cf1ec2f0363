// Looks a path or a mount source up in /proc/self/mountinfo. Used where stat() of a FUSE
// mount point could block on a daemon that is not serving yet.
#pragma once

#include <optional>
#include <string>

namespace ckptfs {

// The "major:minor" of the topmost mount whose mount point is `path`
// (resolved with realpath), or nothing if no mount sits exactly there.
std::optional<std::string> MountDeviceAt(const std::string& path);

// The mount point of a mount whose source (fsname) is `source`, if any.
std::optional<std::string> MountPointOfSource(const std::string& source);

}  // namespace ckptfs
