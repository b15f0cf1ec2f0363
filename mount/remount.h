// Remount: what `ckptfs STORE MOUNTPOINT -o remount,...` does instead of
// starting a daemon. mount(8) runs exactly that, through mount.fuse3, for
// `mount -o remount,ro MOUNTPOINT` (and for `mount -o remount` of an fstab
// entry), with the mount's /proc/mounts options and the ones asked for in
// one list, the last of ro and rw deciding.
//
// The daemon that serves the mount goes on serving it: a remount changes
// what the kernel lets through, with mount(2) MS_REMOUNT and the mount's
// flags (ro, nosuid, nodev, noexec, the atime policies). Going read-only,
// the kernel writes back its cached pages first, and the remount then has
// the daemon commit everything (fsync of the root), so a store remounted
// read-only is durable as it stands. What the daemon was started with
// cannot change while it runs: a ckptfs option whose value differs from the
// daemon's is refused by name, as is `rw` for a daemon that opened its store
// read-only (-o ro, or a rados: image), and the mount is left as it was.
#pragma once

#include <string>
#include <vector>

#include "ckptfs/status.h"

namespace ckptfs {

// A command line, read the way the daemon's is: the positional arguments
// (store, mountpoint) and every -o item in order.
struct CommandLineOptions {
  std::vector<std::string> positional;
  std::vector<std::string> options;  // "name" or "name=value", in order
  // Whether the options ask for a remount.
  bool remount() const;
};
CommandLineOptions SplitCommandLine(const std::vector<std::string>& args);

// Applies the remount `request` asks for (its positional arguments: the
// store, as a path or as /proc/mounts spells it, "ckptfs:PATH", and the
// mountpoint). On an error the mount is unchanged.
Status Remount(const CommandLineOptions& request);

}  // namespace ckptfs
