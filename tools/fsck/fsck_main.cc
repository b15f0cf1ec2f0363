// ckptfs-fsck: offline check (and with --repair, repair) of a ckptfs store.
// Exit codes follow fsck(8): 0 clean, 1 errors corrected, 4 errors left
// uncorrected, 8 operational error, 16 usage error.
#include <chrono>
#include <cstdio>
#include <string>

#include "check/store_checker.h"
#include "ckptfs/version.h"
#include "common/command_line.h"
#include "io/block_device.h"
#include "mountinfo.h"
#include "librados_image.h"
#include "rados_image_device.h"
#include "rados_target.h"
#include "util/busy_retry.h"
#include <spdlog/spdlog.h>

namespace {

constexpr int kClean = 0, kCorrected = 1, kUncorrected = 4, kOperational = 8, kUsage = 16;

// fusermount3 -u returns before the daemon has flushed and let go of the
// store, so a store that is busy is waited for, up to `wait_seconds`.
// A drained image in RADOS, checked as the device it describes.
ckptfs::Result<ckptfs::CheckReport> CheckImage(const std::string& spec, const std::string& ceph_conf) {
  CKPTFS_ASSIGN_OR_RETURN(ckptfs::RadosTarget target,
                          ckptfs::ParseRadosSpec(spec, ceph_conf, "", ckptfs::RadosTarget{}.timeout_seconds));
  CKPTFS_ASSIGN_OR_RETURN(auto image, ckptfs::LibradosImage::Open(target));
  CKPTFS_ASSIGN_OR_RETURN(auto device, ckptfs::RadosImageDevice::Open(std::move(image)));
  return ckptfs::CheckStore(device.get());
}

ckptfs::Result<ckptfs::CheckReport> Check(const std::string& path, double wait_seconds,
                                          const std::string& ceph_conf) {
  if (ckptfs::IsRadosSpec(path)) return CheckImage(path, ceph_conf);
  ckptfs::DeviceOptions options;
  options.read_only = true;  // a shared lock: refused while the store is mounted
  options.use_uring = false;
  auto device = ckptfs::RetryWhileBusy(
      [&] { return ckptfs::OpenDevice(path, options); }, std::chrono::duration<double>(wait_seconds),
      [&](const ckptfs::Status&) {
        // A mount that is up holds the store for as long as it stays up:
        // no use waiting for it.
        if (auto up = ckptfs::MountOfSource(ckptfs::MountSource(path))) {
          return ckptfs::Status::Busy(path + " is mounted on " + up->point +
                                      ", and its daemon writes it: fsck checks a store no daemon writes (unmount "
                                      "it first, or mount it read-only)");
        }
        return ckptfs::Status::Ok();
      },
      [&] {
        std::fprintf(stderr, "ckptfs-fsck: %s is in use; waiting up to %.0f s for it\n", path.c_str(),
                     wait_seconds);
      });
  if (!device.ok()) return device.status();
  return ckptfs::CheckStore(device->get());
}

void Print(const ckptfs::CheckReport& r, bool quiet) {
  for (const auto& e : r.errors) std::printf("ERROR: %s\n", e.c_str());
  for (const auto& w : r.warnings) std::printf("warning: %s\n", w.c_str());
  if (quiet) return;
  std::printf(
      "log: %llu blocks, %llu records\n"
      "tree: %llu inodes (%llu files, %llu directories, %llu symlinks), %llu file bytes\n"
      "data: %llu stored runs (%llu compressed), %llu bytes\n"
      "segments: %u total, %u data, %u metadata, %u free\n",
      (unsigned long long)r.log_blocks, (unsigned long long)r.log_records,
      (unsigned long long)r.inodes, (unsigned long long)r.files,
      (unsigned long long)r.directories, (unsigned long long)r.symlinks,
      (unsigned long long)r.file_bytes, (unsigned long long)r.stored_runs,
      (unsigned long long)r.compressed_runs, (unsigned long long)r.stored_bytes, r.segments_total, r.segments_data, r.segments_meta,
      r.segments_free);
  if (r.remote_runs > 0) {
    std::printf("evicted to the tier: %llu stored runs, %llu bytes, %llu of the runs not checked here\n",
                (unsigned long long)r.remote_runs, (unsigned long long)r.remote_bytes,
                (unsigned long long)r.remote_unchecked);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool repair = false, quiet = false;
  double wait_seconds = 10;
  std::string path;
  ckptfs::tools::ToolApp app("ckptfs-fsck",
                             "Checks superblocks, the metadata log, the tree and link counts, every stored "
                             "run's checksum and the space accounting of the store at PATH.");
  app.add_flag("-r,--repair", repair,
               "fix what can be fixed; files with damaged bytes are kept, the bad ranges zeroed and named "
               "in xattr user.ckptfs.damaged and the files linked into /lost+found");
  // fsck(8) runs fsck.ckptfs (this program) with its own conventions.
  bool fsck_repair = false, check_only = false, force = false;
  int progress_fd = -1;
  app.add_flag("-a,-p,-y", fsck_repair, "fsck(8)'s automatic repair: the same as --repair");
  app.add_flag("-n", check_only, "check only, change nothing (the default)");
  app.add_flag("-f", force, "check even a store that looks clean (always done)");
  app.add_option("-C", progress_fd, "fsck(8)'s progress descriptor (accepted, no progress is drawn)")
      ->type_name("FD");
  app.add_flag("-q,--quiet", quiet, "print only errors, warnings and the verdict");
  app.add_option("-w,--wait", wait_seconds,
                 "if the store is in use (a daemon still flushing after fusermount3 -u), wait up to S "
                 "seconds for it (default 10)")
      ->type_name("S")
      ->check(ckptfs::tools::Seconds(/*zero_ok=*/true));
  std::string ceph_conf;
  app.add_option("--ceph-conf", ceph_conf, "for rados:POOL/NAME: the cluster's ceph.conf (default $CEPH_CONF)");
  app.add_option("PATH", path, "the store: a file or block device, or a drained image, rados:POOL/NAME")
      ->required();
  app.set_version_flag("-V,--version", std::string("ckptfs-fsck ") + CKPTFS_VERSION + " (format v1)");
  app.footer("Exit: 0 clean, 1 errors corrected, 4 errors left, 8 could not check, 16 usage.");
  if (auto code = ckptfs::tools::ParseCommandLine(app, argc, argv, kUsage)) return *code;
  if (check_only && (repair || fsck_repair)) {
    std::fprintf(stderr, "ckptfs-fsck: -n (change nothing) and a repair (-r, -a, -p, -y) exclude each other\n");
    return kUsage;
  }
  repair = repair || fsck_repair;
  spdlog::set_level(spdlog::level::warn);  // the core's mount chatter is not fsck's report
  if (repair && ckptfs::IsRadosSpec(path)) {
    std::fprintf(stderr, "ckptfs-fsck: %s: an image in RADOS is not repaired in place; repair the store "
                         "it drains from, whose next drain replaces it\n", path.c_str());
    return kUsage;
  }
  auto report = Check(path, wait_seconds, ceph_conf);
  if (!report.ok()) {
    std::fprintf(stderr, "ckptfs-fsck: %s: %s\n", path.c_str(), report.status().ToString().c_str());
    return kOperational;
  }
  Print(*report, quiet);
  if (report->clean()) {
    std::printf("%s: clean\n", path.c_str());
    return kClean;
  }
  if (!repair) {
    std::printf("%s: %zu error(s); run with --repair to fix what can be fixed\n", path.c_str(),
                report->errors.size());
    return kUncorrected;
  }
  auto repaired = ckptfs::RepairStore(path, *report);
  if (!repaired.ok()) {
    std::fprintf(stderr, "ckptfs-fsck: repair: %s\n", repaired.status().ToString().c_str());
    return kUncorrected;
  }
  for (const auto& line : *repaired) std::printf("repaired: %s\n", line.c_str());
  auto after = Check(path, wait_seconds, ceph_conf);
  if (!after.ok()) {
    std::fprintf(stderr, "ckptfs-fsck: re-check: %s\n", after.status().ToString().c_str());
    return kOperational;
  }
  // The zeroed ranges no longer fail their checksums; what remains is real.
  if (!after->clean()) {
    Print(*after, true);
    return kUncorrected;
  }
  std::printf("%s: repaired, now clean\n", path.c_str());
  return kCorrected;
}
