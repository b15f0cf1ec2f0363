// ckptfs-stat: the daemon's counters for a mount point, as text, as JSON,
// in Prometheus's text format, or live (--watch) as throughput per second.
// Reads the root's virtual xattrs user.ckptfs.stats(.json, .prom): one
// FUSE round trip, cheap to poll.

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/command_line.h"
#include "common/mount_stats.h"

namespace {

using ckptfs::tools::ReadMountAttribute;
using ckptfs::tools::ReadMountStats;

// One of the store's counters; 0 when the daemon does not report it.
unsigned long long Counter(const nlohmann::json& stats, const char* key) {
  auto store = stats.find("store");
  if (store == stats.end() || !store->is_object()) return 0;
  return store->value(key, 0ull);
}

// How far a counter moved from `prev` to `now`; 0 when it went back, as
// a remount's new daemon starts them again from 0.
unsigned long long Moved(const nlohmann::json& prev, const nlohmann::json& now, const char* key) {
  const unsigned long long before = Counter(prev, key), after = Counter(now, key);
  return after >= before ? after - before : 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false, prometheus = false, watch = false;
  double interval = 1.0;
  std::string mountpoint;
  ckptfs::tools::ToolApp app("ckptfs-stat", "Prints the counters of the ckptfs daemon serving MOUNTPOINT.");
  auto* json_flag = app.add_flag("-j,--json", json, "machine-readable");
  app.add_flag("-p,--prometheus", prometheus,
               "Prometheus text format (the metrics of -o metrics_file=), named ckptfs_*")
      ->excludes(json_flag);
  app.add_flag("-w,--watch", watch, "one line per interval: write/read throughput, commits, free space");
  app.add_option("-i,--interval", interval, "seconds between --watch lines (default 1)")
      ->type_name("SEC")
      ->check(ckptfs::tools::Seconds(/*zero_ok=*/false));
  app.add_option("MOUNTPOINT", mountpoint, "where the store is mounted")->required();
  if (auto code = ckptfs::tools::ParseCommandLine(app, argc, argv, 2)) return *code;
  if (!watch) {
    const char* attribute = json ? "user.ckptfs.stats.json" : prometheus ? "user.ckptfs.stats.prom" : "user.ckptfs.stats";
    auto text = ReadMountAttribute(mountpoint, attribute);
    if (!text.ok()) {
      std::fprintf(stderr, "ckptfs-stat: %s\n", text.status().ToString().c_str());
      return 1;
    }
    std::fputs(text->c_str(), stdout);
    return 0;
  }
  auto first = ReadMountStats(mountpoint);
  if (!first.ok()) {
    std::fprintf(stderr, "ckptfs-stat: %s\n", first.status().ToString().c_str());
    return 1;
  }
  nlohmann::json prev = std::move(*first);
  std::printf("%10s %10s %8s %10s %12s %10s\n", "write MB/s", "read MB/s", "commits", "free GiB",
              "cleaned MB", "dead GiB");
  auto last_time = std::chrono::steady_clock::now();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    auto read = ReadMountStats(mountpoint);
    if (!read.ok()) {
      std::fprintf(stderr, "ckptfs-stat: %s\n", read.status().ToString().c_str());
      return 1;
    }
    nlohmann::json now = std::move(*read);
    auto t = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(t - last_time).count();
    auto rate = [&](const char* key) { return Moved(prev, now, key) / secs / 1e6; };
    std::printf("%10.1f %10.1f %8llu %10.2f %12.1f %10.2f\n", rate("bytes_written"),
                rate("bytes_read"), Moved(prev, now, "commits"),
                Counter(now, "segments_free") * Counter(now, "segment_size") / 1073741824.0,
                Counter(now, "cleaner_bytes_moved") / 1e6, Counter(now, "dead_bytes") / 1073741824.0);
    std::fflush(stdout);
    prev = std::move(now);
    last_time = t;
  }
}
