// Remount: see remount.h.
#include "remount.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "mount_config.h"
#include "mountinfo.h"
#include "rados_target.h"

namespace ckptfs {
namespace {

std::pair<std::string, std::string> NameAndValue(const std::string& option) {
  const size_t eq = option.find('=');
  if (eq == std::string::npos) return {option, ""};
  return {option.substr(0, eq), option.substr(eq + 1)};
}

// The mount flags a remount sets, from the options that name them; the
// last word on each flag wins, as in mount(8).
struct MountFlags {
  unsigned long flags = 0;

  // Applies `option` if it is a flag's; false if it is not one.
  bool Apply(const std::string& option) {
    struct Word {
      const char* name;
      unsigned long set;
      unsigned long clear;
    };
    static constexpr Word kWords[] = {
        {"ro", MS_RDONLY, 0},
        {"rw", 0, MS_RDONLY},
        {"nosuid", MS_NOSUID, 0},
        {"suid", 0, MS_NOSUID},
        {"nodev", MS_NODEV, 0},
        {"dev", 0, MS_NODEV},
        {"noexec", MS_NOEXEC, 0},
        {"exec", 0, MS_NOEXEC},
        {"sync", MS_SYNCHRONOUS, 0},
        {"async", 0, MS_SYNCHRONOUS},
        {"dirsync", MS_DIRSYNC, 0},
        {"noatime", MS_NOATIME, MS_RELATIME | MS_STRICTATIME},
        {"atime", 0, MS_NOATIME},
        {"nodiratime", MS_NODIRATIME, 0},
        {"diratime", 0, MS_NODIRATIME},
        {"relatime", MS_RELATIME, MS_NOATIME | MS_STRICTATIME},
        {"norelatime", 0, MS_RELATIME},
        {"strictatime", MS_STRICTATIME, MS_NOATIME | MS_RELATIME},
        {"lazytime", MS_LAZYTIME, 0},
        {"nolazytime", 0, MS_LAZYTIME},
    };
    for (const Word& w : kWords) {
      if (option != w.name) continue;
      flags = (flags & ~w.clear) | w.set;
      return true;
    }
    return false;
  }
};

// Options of the kernel's FUSE mount, fixed when it was made: a remount
// may repeat them (mount(8) copies them from /proc/mounts), not change them.
bool IsFixedFuseOption(const std::string& name) {
  static const std::set<std::string> kFixed = {"user_id", "group_id",  "default_permissions",
                                               "allow_other", "max_read", "blksize", "rootmode"};
  return kFixed.count(name) > 0;
}

// Options mount(8) and fstab lines carry that concern neither the kernel
// nor ckptfs (mount.fuse3 drops most before the daemon sees them).
bool IsMountToolOption(const std::string& name) {
  static const std::set<std::string> kTool = {"remount", "defaults", "auto",  "noauto", "nofail",
                                              "_netdev", "user",     "nouser", "users", "owner",
                                              "group",   "comment"};
  return kTool.count(name) > 0 || name.rfind("x-", 0) == 0;
}

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The command line of process `pid` if it is a ckptfs daemon: its program
// is named ckptfs and it is not a remount itself.
std::optional<CommandLineOptions> DaemonCommandLine(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  if (!in) return std::nullopt;
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  for (size_t at = 0; at < cmdline.size();) {
    size_t end = cmdline.find('\0', at);
    if (end == std::string::npos) end = cmdline.size();
    argv.push_back(cmdline.substr(at, end - at));
    at = end + 1;
  }
  if (argv.size() < 3 || std::filesystem::path(argv[0]).filename() != "ckptfs") return std::nullopt;
  CommandLineOptions line = SplitCommandLine(std::vector<std::string>(argv.begin() + 1, argv.end()));
  if (line.remount() || line.positional.empty()) return std::nullopt;
  return line;
}

// Whether process `pid` has the file `store` open.
bool HasOpen(pid_t pid, const struct stat& store) {
  std::error_code ec;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    struct stat st;
    if (::stat(fd.path().c_str(), &st) == 0 && st.st_dev == store.st_dev && st.st_ino == store.st_ino) {
      return true;
    }
  }
  return false;
}

// The command line of the daemon serving `mount`: the ckptfs process that
// has its store open, or for an image in RADOS, one that names the image.
// Paths on its command line are not compared: a daemon works from "/", so
// relative ones name nothing any more (and its lock names the process that
// took it, which forked the daemon and exited).
std::optional<CommandLineOptions> DaemonServing(const MountEntry& mount) {
  const std::string spec = StoreOfSource(mount.source);
  const bool rados = IsRadosSpec(spec);
  struct stat store {};
  if (!rados && ::stat(spec.c_str(), &store) != 0) return std::nullopt;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    auto line = DaemonCommandLine(pid);
    if (line && (rados ? line->positional[0] == spec : HasOpen(pid, store))) return line;
  }
  return std::nullopt;
}

// The value the options give `name` last ("" for a flag), if any.
std::optional<std::string> LastValue(const std::vector<std::string>& options, const std::string& name) {
  std::optional<std::string> value;
  for (const std::string& o : options) {
    auto [n, v] = NameAndValue(o);
    if (n == name) value = v;
  }
  return value;
}

bool Contains(const std::vector<std::string>& items, const std::string& item) {
  for (const std::string& i : items) {
    if (i == item) return true;
  }
  return false;
}

}  // namespace

bool CommandLineOptions::remount() const { return Contains(options, "remount"); }

CommandLineOptions SplitCommandLine(const std::vector<std::string>& args) {
  CommandLineOptions line;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-o" && i + 1 < args.size()) {
      for (auto& item : SplitList(args[++i])) line.options.push_back(std::move(item));
    } else if (a.rfind("-o", 0) == 0 && a.size() > 2) {
      for (auto& item : SplitList(a.substr(2))) line.options.push_back(std::move(item));
    } else if (a.empty() || a[0] != '-') {
      line.positional.push_back(a);
    }
  }
  return line;
}

Status Remount(const CommandLineOptions& request) {
  if (request.positional.size() != 2) {
    return Status::Invalid("a remount takes the store and the mountpoint, as mount(8) passes them");
  }
  const std::string& store = request.positional[0];
  const std::string& point = request.positional[1];
  const std::optional<MountEntry> mount = MountAt(point);
  if (!mount) return Status::NotFound(point + " is not a mount point");
  if (mount->fstype != "fuse.ckptfs") {
    return Status::Invalid(point + " is not a ckptfs mount (" + mount->fstype + ")");
  }
  if (MountSource(store) != mount->source) {
    return Status::Invalid(point + " is a mount of " + mount->source + ", not of " + store);
  }
  const std::optional<CommandLineOptions> daemon = DaemonServing(*mount);
  // What the daemon runs with decides what may change: only what the
  // kernel enforces. A daemon that opened its store read-only (or reads an
  // image in RADOS) refuses every change, whatever the kernel lets through.
  MountFlags daemon_flags;
  if (daemon) {
    for (const std::string& o : daemon->options) daemon_flags.Apply(o);
  }
  const bool daemon_read_only =
      IsRadosSpec(StoreOfSource(mount->source)) || (daemon && (daemon_flags.flags & MS_RDONLY));

  MountFlags flags;
  for (const std::string& o : SplitList(mount->options)) flags.Apply(o);
  std::vector<std::string> refused;
  for (const std::string& option : request.options) {
    if (flags.Apply(option)) continue;
    const auto [name, value] = NameAndValue(option);
    if (IsMountToolOption(name)) continue;
    if (IsFixedFuseOption(name)) {
      if (!Contains(SplitList(mount->super_options), option)) {
        refused.push_back(option + " (fixed when the mount was made)");
      }
      continue;
    }
    if (!IsCkptfsOption(name)) {
      refused.push_back(option + " (not a ckptfs or mount option)");
      continue;
    }
    if (!daemon) {
      refused.push_back(option + " (the daemon serving " + point + " was not found to compare with)");
      continue;
    }
    const std::optional<std::string> running = LastValue(daemon->options, name);
    if (running != value) {
      refused.push_back(option + " (the daemon runs with " + (running ? name + (running->empty() ? "" : "=" + *running)
                                                                        : std::string("the default")) +
                        "; unmount and mount again to change it)");
    }
  }
  if (!refused.empty()) {
    std::string list;
    for (const std::string& r : refused) list += (list.empty() ? "" : ", ") + r;
    return Status::Invalid("cannot change on a remount: " + list);
  }
  const bool read_only = flags.flags & MS_RDONLY;
  if (!read_only && daemon_read_only) {
    return Status::ReadOnly(point + " is served by a daemon that opened " + mount->source +
                            " read-only (-o ro, or an image in RADOS); rw needs an unmount and a "
                            "read-write mount");
  }
  // The old mount(2) API: FUSE ignores the data of a remount, and takes
  // the superblock's read-only flag and the mount's flags from `flags`.
  if (::mount(nullptr, mount->point.c_str(), nullptr, MS_REMOUNT | flags.flags, nullptr) != 0) {
    const int err = errno;
    return Status::IOError(err == EPERM ? "remounting " + point + " needs CAP_SYS_ADMIN (root)"
                                        : "mount(2) MS_REMOUNT of " + point,
                           err);
  }
  if (read_only && !daemon_read_only) {
    // The kernel has written back its cached pages on the way to
    // read-only; the commit makes them, and all before them, durable.
    const int dir = ::open(mount->point.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const int rc = dir < 0 ? -1 : ::fsync(dir);
    const int err = errno;
    if (dir >= 0) ::close(dir);
    if (rc != 0) return Status::IOError("committing " + point + " after the remount read-only", err);
  }
  return Status::Ok();
}

}  // namespace ckptfs
