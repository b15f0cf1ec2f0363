// Small helpers shared by the integration tests: whole-file write and read
// through ordinary syscalls, seeded random payloads, and a bounded wait.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>

namespace ckptfs::testing {

// Checks `done` every `every` until it holds (true) or `seconds` have
// passed (false). For what a background thread or another process will do:
// the bound only catches it never happening.
inline bool WaitFor(const std::function<bool()>& done, double seconds,
                    std::chrono::milliseconds every = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

struct CommandOutput {
  int rc;
  std::string out;
};

// Runs a command line through /bin/sh; returns its exit code and stdout
// (append 2>&1 to the command for stderr too).
inline CommandOutput Capture(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) return {127, ""};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, out};
}

// The named counter of a mount's stats (user.ckptfs.stats.json), 0 when absent.
inline uint64_t JsonField(const std::string& json, const std::string& name) {
  const std::string key = "\"" + name + "\":";
  const size_t at = json.find(key);
  if (at == std::string::npos) return 0;
  return std::stoull(json.substr(at + key.size()));
}

inline std::string Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(gen());
  return s;
}

inline bool WriteFile(const std::string& path, const std::string& data, bool fsync_it = false) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, std::min<size_t>(data.size() - done, 300000));
    if (n <= 0) {
      close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  bool ok = !fsync_it || fsync(fd) == 0;
  return close(fd) == 0 && ok;
}

// Appends `chunk` to a new file `path` up to `times` times, then fsyncs and
// closes it; returns the first errno any of that met (0 if none). Filling a
// store reports ENOSPC on a write, the fsync or the close.
inline int WriteUntilError(const std::string& path, const std::string& chunk, int times) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd < 0) return errno;
  int err = 0;
  for (int i = 0; i < times && err == 0; ++i) {
    if (write(fd, chunk.data(), chunk.size()) < 0) err = errno;
  }
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  return err;
}

// Appends what `fd` reads to `out` until its end; 0, or the errno of the
// read that failed (what came before it is kept).
inline int ReadToEnd(int fd, std::string* out) {
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  return n < 0 ? errno : 0;
}

// The file's bytes; a read that fails ends them early.
inline std::string ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return "<open failed: " + std::string(strerror(errno)) + ">";
  std::string out;
  (void)ReadToEnd(fd, &out);
  close(fd);
  return out;
}

// The file's bytes and 0, or the errno of the first call that failed.
inline std::pair<std::string, int> ReadFileOrErrno(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return {"", errno};
  std::string out;
  const int err = ReadToEnd(fd, &out);
  close(fd);
  return {out, err};
}

}  // namespace ckptfs::testing
