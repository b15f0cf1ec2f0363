// Looks a path or a mount source up in /proc/self/mountinfo. Used where stat() of a FUSE
// mount point could block on a daemon that is not serving yet.
#pragma once

#include <optional>
#include <string>

namespace ckptfs {

// The "major:minor" of the topmost mount whose mount point is `path`
// (resolved with realpath), or nothing if no mount sits exactly there.
std::optional<std::string> MountDeviceAt(const std::string& path);

// The source (fsname) a daemon mounts the store at `store` under:
// "ckptfs:" and the store's real path, so any name of it finds its mount.
std::string MountSource(const std::string& store);

// A mount whose source (fsname) is `source`: where, and whether read-only.
struct SourceMount {
  std::string point;
  bool read_only = false;
};
std::optional<SourceMount> MountOfSource(const std::string& source);

}  // namespace ckptfs
