// ckptfs-tier: the RADOS tier's verbs.
//   wait MNT [--timeout S]      returns 0 once everything committed before the
//                               call is in the mount's RADOS image
//   status MNT | rados:POOL/NAME   how far the drain is, or what an image holds
//   takeover rados:POOL/NAME    fences the image's writer off the cluster and
//                               breaks its lock, so another may write it
//   remove rados:POOL/NAME      deletes an image no writer holds
// A mount reports its drain through the root's stats xattr (ckptfs-stat);
// an image is read straight from RADOS.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/command_line.h"
#include "common/mount_stats.h"
#include "drain_stats_json.h"
#include "format/superblock.h"
#include "image_manifest.h"
#include "image_removal.h"
#include "librados_image.h"
#include "published_manifest.h"
#include "rados_target.h"

namespace {

using ckptfs::Result;
using ckptfs::Status;

struct Cluster {
  std::string ceph_conf;
  std::string ceph_id;
  unsigned timeout = 30;  // seconds, whole: what librados' timeouts take
};

// The mount's drain, read from its stats by the table they were written by.
Result<ckptfs::DrainStats> ReadStats(const std::string& mountpoint) {
  CKPTFS_ASSIGN_OR_RETURN(nlohmann::json stats, ckptfs::tools::ReadMountStats(mountpoint));
  if (!stats.contains("tier") || !stats["tier"].is_object()) {
    return Status::Invalid(mountpoint +
                           " does not drain to RADOS (mounted without -o tier=rados:POOL/NAME, or read-only)");
  }
  ckptfs::DrainStats drain = stats["tier"].get<ckptfs::DrainStats>();
  drain.target = stats.value("tier_target", std::string());
  drain.last_error = stats.value("tier_last_error", std::string());
  return drain;
}

// How long Wait pauses between two reads of the stats. Each read is a FUSE
// round trip and a JSON report the daemon writes and this tool parses:
// every 10 ms, a drain's wait took 1% of the two cores the drain shares
// with the OSDs on the test machine (docs/tuning.md#tier-wait-pacing). So
// the pause is half the time the drain needs for what it is behind at the
// rate it sent since the last read: few reads while it is far behind, and
// reads 10 ms apart as it ends, so that the caller learns of the end as soon.
class WaitPacer {
 public:
  static constexpr std::chrono::milliseconds kShortest{10};
  static constexpr std::chrono::milliseconds kLongest{500};

  std::chrono::milliseconds Next(const ckptfs::DrainStats& stats) {
    const auto now = std::chrono::steady_clock::now();
    const uint64_t uploaded = stats.uploaded_bytes;
    const uint64_t behind = stats.behind_bytes;
    if (read_before_) {
      if (uploaded <= uploaded_before_) {
        // Nothing sent since (the drain waits for a burst to end, retries,
        // or publishes): no rate to go by, so the pause grows.
        pause_ *= 2;
      } else if (behind == 0) {
        pause_ = kShortest;  // all sent: the manifest is on its way
      } else {
        const double seconds = std::chrono::duration<double>(now - read_at_).count();
        const double bytes_per_second = static_cast<double>(uploaded - uploaded_before_) / seconds;
        const double half_the_rest_ms = 500.0 * static_cast<double>(behind) / bytes_per_second;
        pause_ = std::chrono::milliseconds(
            static_cast<int64_t>(std::min(half_the_rest_ms, static_cast<double>(kLongest.count()))));
      }
    }
    pause_ = std::clamp(pause_, kShortest, kLongest);
    read_before_ = true;
    read_at_ = now;
    uploaded_before_ = uploaded;
    return pause_;
  }

 private:
  bool read_before_ = false;
  std::chrono::steady_clock::time_point read_at_;
  uint64_t uploaded_before_ = 0;
  std::chrono::milliseconds pause_{kShortest};
};

int Wait(const std::string& mountpoint, double timeout) {
  // fsync of a directory commits everything in the store, so the commit
  // read next covers every write made before this call.
  int fd = ::open(mountpoint.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    std::fprintf(stderr, "ckptfs-tier: committing %s: %s\n", mountpoint.c_str(), std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return 1;
  }
  ::close(fd);
  auto stats = ReadStats(mountpoint);
  if (!stats.ok()) {
    std::fprintf(stderr, "ckptfs-tier: %s\n", stats.status().ToString().c_str());
    return 1;
  }
  const uint64_t target = stats->committed_lsn;
  const auto start = std::chrono::steady_clock::now();
  WaitPacer pacer;
  while (true) {
    if (stats->published && stats->drained_lsn >= target) {
      std::printf("%s: %s holds every commit up to %" PRIu64 " (%.1f s)\n", mountpoint.c_str(),
                  stats->target.c_str(), target,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      return 0;
    }
    if (stats->fenced) {
      std::fprintf(stderr,
                   "ckptfs-tier: %s: RADOS does not hold commit %" PRIu64 ", and never will from this mount: "
                   "its writer was fenced by a takeover (%s)\n",
                   mountpoint.c_str(), target, stats->last_error.c_str());
      return 1;
    }
    if (timeout > 0 && std::chrono::steady_clock::now() - start > std::chrono::duration<double>(timeout)) {
      const std::string& error = stats->last_error;
      std::fprintf(stderr,
                   "ckptfs-tier: %s: RADOS does not hold commit %" PRIu64 " after %.0f s (it holds %" PRIu64
                   ", %" PRIu64 " bytes behind%s%s)\n",
                   mountpoint.c_str(), target, timeout, stats->drained_lsn,
                   stats->behind_bytes, error.empty() ? "" : "; last error: ", error.c_str());
      return 1;
    }
    auto pause = pacer.Next(*stats);
    if (timeout > 0) {
      // Not past the timeout, by more than the shortest pause.
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::duration<double>(timeout) - (std::chrono::steady_clock::now() - start));
      pause = std::min(pause, std::max(left, WaitPacer::kShortest));
    }
    std::this_thread::sleep_for(pause);
    stats = ReadStats(mountpoint);
    if (!stats.ok()) {
      std::fprintf(stderr, "ckptfs-tier: %s\n", stats.status().ToString().c_str());
      return 1;
    }
  }
}

Result<std::unique_ptr<ckptfs::RadosImage>> OpenImage(const std::string& spec, const Cluster& cluster) {
  CKPTFS_ASSIGN_OR_RETURN(ckptfs::RadosTarget target,
                          ckptfs::ParseRadosSpec(spec, cluster.ceph_conf, cluster.ceph_id,
                                                 cluster.timeout));
  return ckptfs::LibradosImage::Open(target);
}

int ImageStatus(const std::string& spec, const Cluster& cluster, bool json) {
  auto image = OpenImage(spec, cluster);
  if (!image.ok()) {
    std::fprintf(stderr, "ckptfs-tier: %s\n", image.status().ToString().c_str());
    return 1;
  }
  auto manifest = ckptfs::ReadPublishedManifest(image->get());
  if (!manifest.ok()) {
    std::fprintf(stderr, "ckptfs-tier: %s: %s\n", spec.c_str(),
                 manifest.status().IsNotFound() ? "no image there (nothing was drained to it)"
                                                : manifest.status().ToString().c_str());
    return 1;
  }
  auto lockers = (*image)->Lockers(ckptfs::ImageManifest::kLockObject, ckptfs::ImageManifest::kLockName);
  std::string writer = "none";
  if (lockers.ok() && !lockers->empty()) {
    writer = (*lockers)[0].client + " at " + (*lockers)[0].address + " (" + (*lockers)[0].cookie + ")";
  }
  char store[24];
  std::snprintf(store, sizeof store, "%016" PRIx64, manifest->store_id);
  // Chunks are the drain's writes (-o drain_write).
  const ckptfs::ImageManifest::ChunkTally chunks = manifest->TallyChunks();
  if (json) {
    nlohmann::json j = {{"image", spec},
                        {"store_id", store},
                        {"commit_lsn", manifest->commit_lsn},
                        {"publish_seq", manifest->publish_seq},
                        {"published_ns", manifest->published_ns},
                        {"segments", manifest->segments.size()},
                        {"bytes", chunks.bytes},
                        {"chunks", chunks.count},
                        {"largest_chunk", chunks.largest},
                        {"writer", writer}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("image        %s\nstore        %s\ncommit       %" PRIu64 " (manifest %" PRIu64
              ")\nsegments     %zu\nbytes        %" PRIu64 "\nchunks       %zu (largest %" PRIu64
              " bytes)\nwriter       %s\n",
              spec.c_str(), store, manifest->commit_lsn, manifest->publish_seq, manifest->segments.size(),
              chunks.bytes, chunks.count, chunks.largest, writer.c_str());
  return 0;
}

int MountStatus(const std::string& mountpoint, bool json) {
  auto stats = ReadStats(mountpoint);
  if (!stats.ok()) {
    std::fprintf(stderr, "ckptfs-tier: %s\n", stats.status().ToString().c_str());
    return 1;
  }
  nlohmann::json tier = *stats;
  tier["target"] = stats->target;
  tier["last_error"] = stats->last_error;
  if (json) {
    std::printf("%s\n", tier.dump().c_str());
    return 0;
  }
  for (auto& [key, value] : tier.items()) std::printf("%-20s %s\n", key.c_str(), value.dump().c_str());
  return 0;
}

int Takeover(const std::string& spec, const Cluster& cluster, bool fence) {
  auto image = OpenImage(spec, cluster);
  if (!image.ok()) {
    std::fprintf(stderr, "ckptfs-tier: %s\n", image.status().ToString().c_str());
    return 1;
  }
  auto lockers = (*image)->Lockers(ckptfs::ImageManifest::kLockObject, ckptfs::ImageManifest::kLockName);
  if (!lockers.ok()) {
    std::fprintf(stderr, "ckptfs-tier: %s\n", lockers.status().ToString().c_str());
    return 1;
  }
  if (lockers->empty()) {
    std::printf("%s: no writer holds it\n", spec.c_str());
    return 0;
  }
  for (const auto& l : *lockers) {
    // Fenced first: a writer that only looked dead (hung, cut off) must
    // not write on once another has the image.
    if (fence) {
      Status fenced = (*image)->Fence(l);
      if (!fenced.ok()) {
        std::fprintf(stderr,
                     "ckptfs-tier: %s; the lock stays. Use a client id that may blocklist (--ceph-id), or "
                     "--no-fence if that writer is surely dead\n",
                     fenced.ToString().c_str());
        return 1;
      }
      std::printf("%s: fenced %s at %s off the cluster (blocklisted for the cluster's default time)\n",
                  spec.c_str(), l.client.c_str(), l.address.c_str());
    }
    Status s = (*image)->BreakLock(ckptfs::ImageManifest::kLockObject, ckptfs::ImageManifest::kLockName, l);
    if (!s.ok()) {
      std::fprintf(stderr, "ckptfs-tier: %s\n", s.ToString().c_str());
      return 1;
    }
    std::printf("%s: broke the lock of %s at %s (%s)\n", spec.c_str(), l.client.c_str(), l.address.c_str(),
                l.cookie.c_str());
  }
  return 0;
}

int Remove(const std::string& spec, const Cluster& cluster, bool force) {
  auto image = OpenImage(spec, cluster);
  if (!image.ok()) {
    std::fprintf(stderr, "ckptfs-tier: %s\n", image.status().ToString().c_str());
    return 1;
  }
  auto removed = ckptfs::RemoveImage(image->get(), force);
  if (!removed.ok()) {
    std::fprintf(stderr, "ckptfs-tier: %s\n", removed.status().ToString().c_str());
    return 1;
  }
  std::printf("%s: removed %" PRIu64 " objects, %" PRIu64 " of them segment objects\n", spec.c_str(),
              removed->objects, removed->segments);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ckptfs::tools::ToolApp app("ckptfs-tier", "The RADOS tier of a ckptfs mount: wait for the drain, "
                                            "show it, take an image over from a dead writer, remove an image.");
  app.require_subcommand(1);
  Cluster cluster;
  std::string where;
  double timeout = 0;
  bool json = false;
  auto add_cluster = [&](CLI::App* sub) {
    sub->add_option("--ceph-conf", cluster.ceph_conf, "the cluster's ceph.conf (default $CEPH_CONF)");
    sub->add_option("--ceph-id", cluster.ceph_id, "RADOS client id without \"client.\" (default admin)");
    // The mount's rados_timeout bounds: 0 would mean no timeout to librados.
    sub->add_option("--rados-timeout", cluster.timeout,
                    "longest wait for a RADOS call, whole seconds 1-3600 (default 30)")
        ->check(CLI::Range(1u, 3600u));
  };
  CLI::App* wait = app.add_subcommand("wait", "return once everything committed before the call is in RADOS");
  wait->add_option("MOUNTPOINT", where, "a mount with -o tier=")->required();
  wait->add_option("--timeout", timeout, "give up after S seconds, exit 1 (default: wait as long as it takes)")
      ->check(ckptfs::tools::Seconds(false));
  CLI::App* status = app.add_subcommand("status", "the drain of a mount, or what a RADOS image holds");
  status->add_option("WHERE", where, "a mountpoint, or rados:POOL/NAME")->required();
  status->add_flag("-j,--json", json, "machine-readable");
  add_cluster(status);
  CLI::App* takeover = app.add_subcommand(
      "takeover", "fence the writer of an image off the cluster and break its lock, so another may write it");
  takeover->add_option("IMAGE", where, "rados:POOL/NAME")->required();
  bool no_fence = false;
  takeover->add_flag("--no-fence", no_fence,
                     "break the lock without blocklisting its holder (a client that may not blocklist; only "
                     "when that writer is surely dead)");
  add_cluster(takeover);
  CLI::App* remove = app.add_subcommand("remove", "delete an image no writer holds, every object of it");
  remove->add_option("IMAGE", where, "rados:POOL/NAME")->required();
  bool force = false;
  remove->add_flag("--force", force,
                   "also an image holding runs its store evicted (that store loses them), or whose manifest "
                   "does not decode");
  add_cluster(remove);
  if (auto code = ckptfs::tools::ParseCommandLine(app, argc, argv, 2)) return *code;

  if (wait->parsed()) return Wait(where, timeout);
  if (status->parsed()) {
    return ckptfs::IsRadosSpec(where) ? ImageStatus(where, cluster, json) : MountStatus(where, json);
  }
  if (takeover->parsed()) return Takeover(where, cluster, !no_fence);
  return Remove(where, cluster, force);
}
