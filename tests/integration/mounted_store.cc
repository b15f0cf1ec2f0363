// MountedStore implementation: fork/exec of the real daemon, mount detection
// through /proc/self/mountinfo.
#include "mounted_store.h"

#include "file_util.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace ckptfs::testing {

MountedStore::MountedStore() {
  char tmpl[] = "/tmp/ckptfs-it-XXXXXX";
  if (!mkdtemp(tmpl)) std::abort();
  dir_ = tmpl;
  store_ = dir_ + "/store.img";
  mountpoint_ = dir_ + "/mnt";
  log_path_ = dir_ + "/daemon.log";
  std::filesystem::create_directory(mountpoint_);
}

MountedStore::~MountedStore() {
  if (pid_ > 0) {
    Run("fusermount3 -u " + mountpoint_ + " 2>/dev/null");
    int status;
    if (WaitFor([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, kDaemonSeconds)) {
      pid_ = -1;
    } else {
      Kill();
    }
  }
  if (IsMounted()) Run("fusermount3 -u -z " + mountpoint_ + " 2>/dev/null");
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string MountedStore::BinDir() { return CKPTFS_BIN_DIR; }

int MountedStore::Run(const std::string& command) {
  int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

pid_t MountedStore::Spawn(const std::vector<std::string>& args, const std::string& log_path) {
  pid_t pid = fork();
  if (pid == 0) {
    // The daemon starts with the signals a shell in the foreground gives
    // it. A test binary run as a script's background job inherits SIGINT
    // and SIGQUIT ignored (POSIX, for jobs without job control), libfuse
    // leaves an ignored signal ignored, and the tests that stop a daemon
    // with SIGINT would wait for it forever.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int MountedStore::Format(const std::string& size, const std::string& segment_size) {
  return Run(BinDir() + "/mkfs.ckptfs --size " + size + " --segment-size " + segment_size + " " +
             store_ + " >/dev/null");
}

bool MountedStore::IsMounted() const {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    if (point == mountpoint_) return true;
  }
  return false;
}

bool MountedStore::Mount(const std::vector<std::string>& options) { return MountFrom(store_, options); }

bool MountedStore::MountFrom(const std::string& source, const std::vector<std::string>& options) {
  std::vector<std::string> args = {BinDir() + "/ckptfs", source, mountpoint_, "-f"};
  for (const auto& o : options) {
    args.push_back("-o");
    args.push_back(o);
  }
  // A whole suite's mounts with more options (CI runs the suite over FUSE
  // over io_uring this way); after the test's own, so they win.
  if (const char* extra = std::getenv("CKPTFS_TEST_MOUNT_OPTIONS"); extra && *extra) {
    args.push_back("-o");
    args.push_back(extra);
  }
  pid_ = Spawn(args, log_path_);
  // Until the daemon mounts or exits (kDaemonSeconds: one that hangs
  // before mounting is caught here, one that hangs after by the test's
  // timeout).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kDaemonSeconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (IsMounted()) {
      // mount(2) is done before the daemon has answered the kernel's INIT;
      // a stat of the root waits for that answer, so what the daemon sets
      // up after mounting (the read-ahead, say) is in place on return.
      struct stat st;
      if (stat(mountpoint_.c_str(), &st) == 0) return true;
      Kill();  // mounted but not serving: its log says why
      return false;
    }
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  // Hung before mounting: killed, so its log is final.
  Kill();
  return false;
}

int MountedStore::Unmount() {
  if (pid_ <= 0) return -1;
  if (Run("fusermount3 -u " + mountpoint_) != 0) return -1;
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void MountedStore::Kill() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  Run("fusermount3 -u -z " + mountpoint_ + " 2>/dev/null");
}

std::string MountedStore::log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ckptfs::testing
