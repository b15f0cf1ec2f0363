// ckptfs-stat: the daemon's counters for a mount point, as text, as JSON,
// in Prometheus's text format, or live (--watch) as throughput per second.
// Reads the root's virtual xattrs user.ckptfs.stats(.json, .prom): one
// FUSE round trip, cheap to poll.

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "ckptfs/stats_json.h"
#include "common/command_line.h"
#include "common/mount_stats.h"

namespace {

using ckptfs::Result;
using ckptfs::StoreStats;
using ckptfs::tools::ReadMountAttribute;

// The store's figures the daemon reports (its "store" object, read by the
// same table it was written by); those it does not report read as 0.
Result<StoreStats> ReadStoreStats(const std::string& mountpoint) {
  CKPTFS_ASSIGN_OR_RETURN(nlohmann::json stats, ckptfs::tools::ReadMountStats(mountpoint));
  auto store = stats.find("store");
  if (store == stats.end() || !store->is_object()) return StoreStats{};
  return store->get<StoreStats>();
}

// How far a counter moved from `before` to `after`; 0 when it went back, as
// a remount's new daemon starts them again from 0.
unsigned long long Moved(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

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
  auto first = ReadStoreStats(mountpoint);
  if (!first.ok()) {
    std::fprintf(stderr, "ckptfs-stat: %s\n", first.status().ToString().c_str());
    return 1;
  }
  StoreStats prev = *first;
  std::printf("%10s %10s %8s %10s %12s %10s\n", "write MB/s", "read MB/s", "commits", "free GiB",
              "cleaned MB", "dead GiB");
  auto last_time = std::chrono::steady_clock::now();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    auto read = ReadStoreStats(mountpoint);
    if (!read.ok()) {
      std::fprintf(stderr, "ckptfs-stat: %s\n", read.status().ToString().c_str());
      return 1;
    }
    const StoreStats now = *read;
    auto t = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(t - last_time).count();
    std::printf("%10.1f %10.1f %8llu %10.2f %12.1f %10.2f\n", Moved(prev.bytes_written, now.bytes_written) / secs / 1e6,
                Moved(prev.bytes_read, now.bytes_read) / secs / 1e6, Moved(prev.commits, now.commits),
                static_cast<double>(now.segments_free * now.segment_size) / 1073741824.0,
                static_cast<double>(now.cleaner_bytes_moved) / 1e6,
                static_cast<double>(now.dead_bytes) / 1073741824.0);
    std::fflush(stdout);
    prev = now;
    last_time = t;
  }
}
