// Looks a path or a mount source up in /proc/self/mountinfo. Used where stat() of a FUSE
// mount point could block on a daemon that is not serving yet.
#pragma once

#include <optional>
#include <string>

namespace ckptfs {

// One line of /proc/self/mountinfo.
struct MountEntry {
  std::string device;         // "major:minor"
  std::string point;          // unescaped
  std::string options;        // the mount's own: "rw,nosuid,relatime"
  std::string fstype;         // "fuse.ckptfs"
  std::string source;         // unescaped: "ckptfs:/var/lib/ckpt.img"
  std::string super_options;  // the superblock's: "rw,user_id=0,group_id=0,..."
  bool read_only() const { return options == "ro" || options.rfind("ro,", 0) == 0; }
};

// The topmost mount whose mount point is `path` (resolved with realpath),
// or nothing if no mount sits exactly there.
std::optional<MountEntry> MountAt(const std::string& path);

// The "major:minor" of MountAt(path).
std::optional<std::string> MountDeviceAt(const std::string& path);

// The source (fsname) a daemon mounts the store at `store` under:
// "ckptfs:" and the store's real path, so any name of it finds its mount.
// A source given already ("ckptfs:PATH", as /proc/mounts and mount(8)
// spell it) is kept as it is.
std::string MountSource(const std::string& store);
// The inverse: the store a source names ("ckptfs:PATH" -> PATH); anything
// else is taken to name the store itself.
std::string StoreOfSource(const std::string& source);

// A mount whose source (fsname) is `source`: where, and whether read-only.
struct SourceMount {
  std::string point;
  bool read_only = false;
};
std::optional<SourceMount> MountOfSource(const std::string& source);

}  // namespace ckptfs
