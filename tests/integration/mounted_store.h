// MountedStore: a real ckptfs daemon on a fresh store in a temporary
// directory, for tests that go through the kernel. The destructor always
// unmounts (lazily if the daemon died) and kills a daemon left running, so a
// failing test leaves no mount behind.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ckptfs::testing {

class MountedStore {
 public:
  MountedStore();
  ~MountedStore();
  MountedStore(const MountedStore&) = delete;
  MountedStore& operator=(const MountedStore&) = delete;

  // How long a daemon gets to mount, or to exit once unmounted (it flushes
  // first): a store replayed after a kill, a daemon under a sanitizer or a
  // cluster that answers late may take many seconds on a loaded machine.
  // The bound catches a daemon that hangs.
  static constexpr int kDaemonSeconds = 120;

  // Runs mkfs.ckptfs; returns its exit code.
  int Format(const std::string& size, const std::string& segment_size = "4M");
  // Starts the daemon in the foreground and waits until the mount is live.
  // Returns false (with the daemon's log in `error()`) if it did not come up.
  bool Mount(const std::vector<std::string>& options = {});
  // Mounts `source` (another store, or a RADOS image: rados:POOL/NAME) on
  // this mountpoint instead of the store made here.
  bool MountFrom(const std::string& source, const std::vector<std::string>& options = {});
  // fusermount3 -u, then waits for the daemon; returns its exit code.
  int Unmount();
  // SIGKILL to the daemon, then a lazy unmount of the dead mount.
  void Kill();

  const std::string& mountpoint() const { return mountpoint_; }
  const std::string& store() const { return store_; }
  const std::string& dir() const { return dir_; }
  std::string Path(const std::string& rel) const { return mountpoint_ + "/" + rel; }
  std::string log() const;
  pid_t daemon_pid() const { return pid_; }

  // Starts `args` (argv[0] a path) with stdout and stderr appended to
  // `log_path`; returns the child's pid.
  static pid_t Spawn(const std::vector<std::string>& args, const std::string& log_path);

  // Runs a command line through /bin/sh; returns its exit code.
  static int Run(const std::string& command);
  static std::string BinDir();

 private:
  bool IsMounted() const;

  std::string dir_, store_, mountpoint_, log_path_;
  pid_t pid_ = -1;
};

}  // namespace ckptfs::testing
