// ckptfs-stat: the daemon's counters for a mount point, as text, as JSON,
// or live (--watch) as throughput per second. Reads the root's virtual
// xattrs user.ckptfs.stats(.json): one FUSE round trip, cheap to poll.
#include <getopt.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

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

// The value of "key": in the daemon's flat JSON (integers only).
unsigned long long Field(const std::string& json, const char* key) {
  std::string needle = std::string("\"") + key + "\":";
  size_t at = json.find(needle);
  return at == std::string::npos ? 0 : std::strtoull(json.c_str() + at + needle.size(), nullptr, 10);
}

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: ckptfs-stat [--json | --watch [--interval SEC]] MOUNTPOINT\n"
               "  prints the counters of the ckptfs daemon serving MOUNTPOINT\n"
               "  --json     machine-readable\n"
               "  --watch    one line per interval: write/read throughput, commits, free space\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false, watch = false;
  double interval = 1.0;
  static const option kLong[] = {{"json", no_argument, nullptr, 'j'},
                                 {"watch", no_argument, nullptr, 'w'},
                                 {"interval", required_argument, nullptr, 'i'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "jwi:h", kLong, nullptr)) != -1) {
    switch (c) {
      case 'j': json = true; break;
      case 'w': watch = true; break;
      case 'i': interval = std::atof(optarg); break;
      case 'h': Usage(stdout); return 0;
      default: Usage(stderr); return 2;
    }
  }
  if (optind + 1 != argc || interval <= 0) {
    Usage(stderr);
    return 2;
  }
  const std::string mountpoint = argv[optind];
  std::string text;
  if (!ReadXattr(mountpoint, json || watch ? "user.ckptfs.stats.json" : "user.ckptfs.stats", &text)) {
    std::fprintf(stderr, "ckptfs-stat: %s: %s (is it a ckptfs mount?)\n", mountpoint.c_str(),
                 std::strerror(errno));
    return 1;
  }
  if (!watch) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::printf("%10s %10s %8s %10s %12s %10s\n", "write MB/s", "read MB/s", "commits", "free GiB",
              "cleaned MB", "dead GiB");
  auto last_time = std::chrono::steady_clock::now();
  std::string prev = text;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    std::string now;
    if (!ReadXattr(mountpoint, "user.ckptfs.stats.json", &now)) {
      std::fprintf(stderr, "ckptfs-stat: %s: %s\n", mountpoint.c_str(), std::strerror(errno));
      return 1;
    }
    auto t = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(t - last_time).count();
    auto rate = [&](const char* key) { return (Field(now, key) - Field(prev, key)) / secs / 1e6; };
    std::printf("%10.1f %10.1f %8llu %10.2f %12.1f %10.2f\n", rate("bytes_written"),
                rate("bytes_read"), Field(now, "commits") - Field(prev, "commits"),
                Field(now, "segments_free") * Field(now, "segment_size") / 1073741824.0,
                Field(now, "cleaner_bytes_moved") / 1e6, Field(now, "dead_bytes") / 1073741824.0);
    std::fflush(stdout);
    prev = std::move(now);
    last_time = t;
  }
}
