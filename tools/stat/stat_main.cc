// ckptfs-stat: the daemon's counters for a mount point, as text, as JSON,
// or live (--watch) as throughput per second. Reads the root's virtual
// xattrs user.ckptfs.stats(.json): one FUSE round trip, cheap to poll.
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/command_line.h"

namespace {

bool ReadXattr(const std::string& mountpoint, const char* name, std::string* out) {
  for (size_t size = 16384;; size *= 2) {
    out->resize(size);
    ssize_t n = getxattr(mountpoint.c_str(), name, out->data(), size);
    if (n >= 0) {
      out->resize(static_cast<size_t>(n));
      return true;
    }
    if (errno != ERANGE) return false;
  }
}

// The daemon's counters as JSON, or a null value (errno set) when they
// cannot be read or are not JSON.
nlohmann::json ReadStats(const std::string& mountpoint) {
  std::string text;
  if (!ReadXattr(mountpoint, "user.ckptfs.stats.json", &text)) return nullptr;
  nlohmann::json stats = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!stats.is_object()) {
    errno = EBADMSG;
    return nullptr;
  }
  return stats;
}

// One of the store's counters; 0 when the daemon does not report it.
unsigned long long Counter(const nlohmann::json& stats, const char* key) {
  auto store = stats.find("store");
  if (store == stats.end() || !store->is_object()) return 0;
  return store->value(key, 0ull);
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false, watch = false;
  double interval = 1.0;
  std::string mountpoint;
  ckptfs::tools::ToolApp app("ckptfs-stat", "Prints the counters of the ckptfs daemon serving MOUNTPOINT.");
  app.add_flag("-j,--json", json, "machine-readable");
  app.add_flag("-w,--watch", watch, "one line per interval: write/read throughput, commits, free space");
  app.add_option("-i,--interval", interval, "seconds between --watch lines (default 1)")
      ->type_name("SEC")
      ->check(ckptfs::tools::Seconds(/*zero_ok=*/false));
  app.add_option("MOUNTPOINT", mountpoint, "where the store is mounted")->required();
  if (auto code = ckptfs::tools::ParseCommandLine(app, argc, argv, 2)) return *code;
  if (!watch) {
    std::string text;
    if (!ReadXattr(mountpoint, json ? "user.ckptfs.stats.json" : "user.ckptfs.stats", &text)) {
      std::fprintf(stderr, "ckptfs-stat: %s: %s (is it a ckptfs mount?)\n", mountpoint.c_str(),
                   std::strerror(errno));
      return 1;
    }
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  nlohmann::json prev = ReadStats(mountpoint);
  if (prev.is_null()) {
    std::fprintf(stderr, "ckptfs-stat: %s: %s (is it a ckptfs mount?)\n", mountpoint.c_str(),
                 std::strerror(errno));
    return 1;
  }
  std::printf("%10s %10s %8s %10s %12s %10s\n", "write MB/s", "read MB/s", "commits", "free GiB",
              "cleaned MB", "dead GiB");
  auto last_time = std::chrono::steady_clock::now();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    nlohmann::json now = ReadStats(mountpoint);
    if (now.is_null()) {
      std::fprintf(stderr, "ckptfs-stat: %s: %s\n", mountpoint.c_str(), std::strerror(errno));
      return 1;
    }
    auto t = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(t - last_time).count();
    auto rate = [&](const char* key) { return (Counter(now, key) - Counter(prev, key)) / secs / 1e6; };
    std::printf("%10.1f %10.1f %8llu %10.2f %12.1f %10.2f\n", rate("bytes_written"),
                rate("bytes_read"), Counter(now, "commits") - Counter(prev, "commits"),
                Counter(now, "segments_free") * Counter(now, "segment_size") / 1073741824.0,
                Counter(now, "cleaner_bytes_moved") / 1e6, Counter(now, "dead_bytes") / 1073741824.0);
    std::fflush(stdout);
    prev = std::move(now);
    last_time = t;
  }
}
