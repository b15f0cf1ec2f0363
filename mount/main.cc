// ckptfs daemon: ckptfs STORE MOUNTPOINT [-f] [-d] [-o opt,...]
// Opens and replays the store before mounting (so errors reach the
// terminal), mounts, daemonizes, serves, and on unmount or SIGTERM writes
// everything out before exiting 0.
#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ckptfs/filesystem.h"
#include "ckptfs/version.h"
#include "fuse_ops.h"
#include "mount_config.h"
#include "exit_code.h"
#include "metrics_file.h"
#include "mountinfo.h"
#include "read_ahead.h"
#include "remount.h"
#include "store_holder.h"
#include "uring_channel.h"
#include "open_device.h"
#include "librados_image.h"
#include "rados_image_device.h"
#include "tier_attachment.h"
#include "util/busy_retry.h"

namespace {

void Usage(const char* prog) {
  std::printf("usage: %s STORE MOUNTPOINT [options]\n\n", prog);
  std::printf("Mounts the ckptfs store at STORE (made by mkfs.ckptfs) on MOUNTPOINT.\n\n");
  std::printf("%s\n", ckptfs::MountOptionsHelp());
  fuse_cmdline_help();
  fuse_lowlevel_help();
  std::printf("\nExit status:\n"
              "    %d  clean: unmounted with everything flushed (and drained, with -o tier=)\n"
              "    %d  could not mount or go on serving (the reason is on stderr or in the log)\n"
              "    %d  bad command line or option\n"
              "    %d  the store failed: a commit or the final flush did not reach the device\n"
              "        (fsynced data is safe; run ckptfs-fsck before mounting it again)\n"
              "    %d  stopped with commits not yet in the RADOS tier (logged how far behind);\n"
              "        the next mount of the store sends them\n",
              ckptfs::kExitClean, ckptfs::kExitFailed, ckptfs::kExitUsage, ckptfs::kExitStoreFailed,
              ckptfs::kExitNotDrained);
}

// A mountpoint must be an existing directory and, unless asked, empty:
// mounting over files hides them, which is rarely what anyone wants.
ckptfs::Status CheckMountpoint(const char* path, bool allow_nonempty) {
  struct stat st;
  if (::stat(path, &st) != 0) {
    return ckptfs::Status::IOError(std::string("mountpoint ") + path, errno);
  }
  if (!S_ISDIR(st.st_mode)) return ckptfs::Status::NotDirectory(std::string("mountpoint ") + path);
  if (ckptfs::MountDeviceAt(path)) {
    // Mounting on top would hide the mount that is there, files and all.
    return ckptfs::Status::Busy(std::string("mountpoint ") + path +
                                " is already a mount point; unmount it first");
  }
  if (allow_nonempty) return ckptfs::Status::Ok();
  DIR* dir = ::opendir(path);
  if (!dir) return ckptfs::Status::IOError(std::string("mountpoint ") + path, errno);
  bool empty = true;
  while (dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      empty = false;
      break;
    }
  }
  ::closedir(dir);
  if (!empty) {
    return ckptfs::Status::NotEmpty(std::string("mountpoint ") + path +
                                    " is not empty (use -o nonempty to mount over it)");
  }
  return ckptfs::Status::Ok();
}

// What the drain had not sent when the daemon stopped: empty when RADOS
// holds every commit, else a sentence saying how far behind it is.
std::string UndrainedCommits(const ckptfs::TierAttachment& tier, const ckptfs::Status& finished) {
  const std::optional<ckptfs::DrainStats> stats = tier.Stats();
  if (!stats) return "stopped before the drain to the RADOS tier connected: no commit of this store is in RADOS";
  if (stats->published && stats->drained_lsn >= stats->committed_lsn) return "";
  std::string why = finished.ok() ? "" : " (" + finished.ToString() + ")";
  if (!stats->last_error.empty()) why += " (last error: " + stats->last_error + ")";
  return "stopped with commits not yet in " + stats->target + ": RADOS holds the log up to lsn " +
         std::to_string(stats->drained_lsn) + " of " + std::to_string(stats->committed_lsn) + ", " +
         std::to_string(stats->behind_bytes) + " bytes still to send" + why +
         "; the next mount of this store sends them";
}

// A path as a Prometheus label: absolute, as /proc/mounts has it.
std::string AbsolutePath(const char* path) {
  char resolved[PATH_MAX];
  return realpath(path, resolved) != nullptr ? resolved : path;
}

ckptfs::Status SetUpLogging(const ckptfs::MountConfig& config, bool foreground) {
  std::shared_ptr<spdlog::logger> logger;
  if (!config.log_file.empty()) {
    // Opened here first: spdlog would make missing directories on the way
    // and throw for anything else.
    const int fd = ::open(config.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return ckptfs::Status::IOError("log_file " + config.log_file, errno);
    ::close(fd);
    try {
      logger = spdlog::basic_logger_mt("ckptfs", config.log_file);
    } catch (const spdlog::spdlog_ex& e) {
      return ckptfs::Status::IOError("log_file " + config.log_file + ": " + e.what());
    }
  } else if (foreground) {
    logger = spdlog::stderr_color_mt("ckptfs");
  } else {
    logger = spdlog::syslog_logger_mt("ckptfs", "ckptfs", LOG_PID, LOG_DAEMON);
  }
  logger->set_level(spdlog::level::from_str(config.log_level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
  return ckptfs::Status::Ok();
}

// Why a mount (read-only if `read_only`) cannot share `store` with the
// mount of it that is up. A store has one writer or any number of readers:
// a writer reuses the segments a reader of an older state would read.
ckptfs::Status RefuseBeside(const std::string& store, bool read_only,
                            const ckptfs::SourceMount& up) {
  if (!read_only && up.read_only) {
    return ckptfs::Status::Busy(store + " is mounted read-only on " + up.point +
                                "; a read-write mount needs the store to itself (one writer, or "
                                "any number of read-only mounts): unmount the read-only mounts "
                                "first");
  }
  if (read_only && !up.read_only) {
    return ckptfs::Status::Busy(store + " is mounted read-write on " + up.point +
                                "; a read-only mount cannot share a store with a writer, which "
                                "reuses the space readers read from (one writer, or any number "
                                "of read-only mounts)");
  }
  return ckptfs::Status::Busy(store + " is in use: mounted on " + up.point);
}

// Opens the store. One that is locked is refused at once if it is mounted,
// and otherwise waited for: the previous daemon is still flushing it after
// `fusermount3 -u`, which returns before the flush ends.
// The RADOS target of a `rados:POOL/NAME` source or of -o tier=, with the
// cluster options of the command line.
ckptfs::Result<ckptfs::RadosTarget> RadosTargetOf(const std::string& spec, const ckptfs::MountConfig& config) {
  return ckptfs::ParseRadosSpec(spec, config.ceph_conf, config.ceph_id, config.rados_timeout_seconds);
}

// A drained image, mounted read-only from RADOS on any node, with the
// -o cache= file locked and open as `cache_fd` (-1: none, or not in this
// process: a daemon that forks attaches it in the child, which serves).
ckptfs::Result<std::unique_ptr<ckptfs::FileSystem>> OpenRadosImage(const ckptfs::MountConfig& config,
                                                                   int cache_fd) {
  CKPTFS_ASSIGN_OR_RETURN(ckptfs::RadosTarget target, RadosTargetOf(config.store_path, config));
  CKPTFS_ASSIGN_OR_RETURN(auto image, ckptfs::LibradosImage::Open(target));
  CKPTFS_ASSIGN_OR_RETURN(auto device, ckptfs::RadosImageDevice::Open(std::move(image)));
  if (cache_fd >= 0) {
    ckptfs::Status cached = device->AttachCache(config.cache, cache_fd, config.cache_bytes);
    if (!cached.ok()) return cached.WithContext("cache=" + config.cache);
  }
  spdlog::info("{}: image of commit {} ({} bytes in {} segments)", config.store_path,
               device->manifest().commit_lsn, device->manifest().StoredBytes(),
               device->manifest().segments.size());
  ckptfs::MountOptions options = config.mount;
  options.read_only = true;
  options.direct_io = false;
  return ckptfs::OpenFileSystemOnDevice(std::move(device), options);
}

ckptfs::Result<std::unique_ptr<ckptfs::FileSystem>> OpenStore(const ckptfs::MountConfig& config,
                                                              int cache_fd) {
  const std::string& store = config.store_path;
  if (ckptfs::IsRadosSpec(store)) return OpenRadosImage(config, cache_fd);
  return ckptfs::RetryWhileBusy(
      [&] { return ckptfs::FileSystem::Open(store, config.mount); },
      std::chrono::duration<double>(config.busy_wait_seconds),
      [&](const ckptfs::Status&) {
        if (auto up = ckptfs::MountOfSource(ckptfs::MountSource(store))) {
          return RefuseBeside(store, config.mount.read_only, *up);
        }
        return ckptfs::Status::Ok();
      },
      [&] {
        const auto holder = ckptfs::FlockHolder(store);
        std::fprintf(stderr,
                     "ckptfs: %s is held by %s (a daemon still flushing it after an unmount, "
                     "or an fsck); waiting up to %.0f s for it to let go (-o wait=S)\n",
                     store.c_str(), holder ? ckptfs::DescribeProcess(*holder).c_str() : "another process",
                     config.busy_wait_seconds);
      });
}

}  // namespace

int main(int argc, char* argv[]) {
  // Read buffers and cached runs are 128 KiB-1 MiB and short-lived. With
  // glibc's adaptive threshold they soon come from per-thread heaps, which
  // keep the memory after free: one 1 GiB O_DIRECT read left the daemon at
  // 850 MB resident, far over its budget. A fixed threshold maps and unmaps
  // them (184 MB after the same read).
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
  // libfuse's SIGTERM/SIGINT/SIGHUP handler ends the loop by interrupting
  // the main thread's wait; taken by any other thread it only sets a flag
  // nobody looks at, and the daemon hangs. So every thread the core starts
  // inherits them blocked, and the main thread unblocks them for the loop.
  sigset_t termination;
  sigemptyset(&termination);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&termination, sig);
  pthread_sigmask(SIG_BLOCK, &termination, nullptr);
  // mount(8) runs the helper with -o remount for `mount -o remount,...`:
  // the daemon that serves the mount stays, and only the kernel's side of
  // it changes (remount.h).
  if (const auto line = ckptfs::SplitCommandLine(std::vector<std::string>(argv + 1, argv + argc));
      line.remount()) {
    ckptfs::Status remounted = ckptfs::Remount(line);
    if (!remounted.ok()) {
      std::fprintf(stderr, "ckptfs: cannot remount %s: %s\n",
                   line.positional.size() > 1 ? line.positional[1].c_str() : "", remounted.ToString().c_str());
      return ckptfs::kExitFailed;
    }
    return 0;
  }
  fuse_args args = FUSE_ARGS_INIT(argc, argv);
  ckptfs::MountConfig config;
  ckptfs::Status parsed = ckptfs::ParseMountConfig(&args, &config);
  if (!parsed.ok()) {
    std::fprintf(stderr, "ckptfs: %s\n", parsed.message().c_str());
    return ckptfs::kExitUsage;
  }
  if (ckptfs::IsRadosSpec(config.store_path)) {
    // A mount of a RADOS image reads every byte into a buffer librados
    // allocates per reply (up to a run, 1 MiB) and frees once it is copied:
    // mapped and unmapped each time, their page faults, zeroing and TLB
    // flushes were a fifth of the daemon's CPU in a restore. From the heap,
    // and kept there, they are reused instead, which halved it; the price is
    // the heaps kept (230 MB resident after a restore instead of 100 MB), and
    // this mount is read-only, so no write buffers add to them.
    //
    // Kept means kept: a messenger thread's heap swings by the run cache's
    // 16 MiB and the reads in flight as the cache lets go of old replies,
    // and with the top trimmed past 8 MiB each swing handed 8-14 MB back
    // (MADV_DONTNEED) for the next replies to fault in again, 4 KiB at a
    // time: 40 000-60 000 faults a 1.7 GB restore, and the socket copies and
    // CRCs into those cold pages cost twice as much a byte as into warm ones
    // (docs/tuning.md#image-mount-malloc).
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
  }
  fuse_cmdline_opts opts{};
  if (fuse_parse_cmdline(&args, &opts) != 0) return ckptfs::kExitUsage;
  if (opts.show_help) {
    Usage(argv[0]);
    return 0;
  }
  if (opts.show_version) {
    std::printf("ckptfs %s (format v1), libfuse %s\n", CKPTFS_VERSION, fuse_pkgversion());
    return 0;
  }
  if (config.store_path.empty() || !opts.mountpoint) {
    std::fprintf(stderr, "usage: %s STORE MOUNTPOINT [options] (see --help)\n", argv[0]);
    return ckptfs::kExitUsage;
  }
  ckptfs::Status mp = CheckMountpoint(opts.mountpoint, config.allow_nonempty);
  if (!mp.ok()) {
    std::fprintf(stderr, "ckptfs: %s\n", mp.ToString().c_str());
    return ckptfs::kExitFailed;
  }
  if (ckptfs::Status logging = SetUpLogging(config, opts.foreground); !logging.ok()) {
    std::fprintf(stderr, "ckptfs: %s\n", logging.ToString().c_str());
    return ckptfs::kExitFailed;
  }

  if (config.fuse.uring == ckptfs::UringMode::kOn) {
    if (ckptfs::Status ring = ckptfs::UringChannel::KernelOffers(); !ring.ok()) {
      std::fprintf(stderr, "ckptfs: -o uring=on: %s\n", ring.ToString().c_str());
      return ckptfs::kExitFailed;
    }
  }

  // The session is made before the store opens: libfuse checks its own
  // options there, and one it refuses should fail the mount at once, not
  // after a store's replay or a connect to the cluster.
  std::string fsname = "-ofsname=" + ckptfs::MountSource(config.store_path);
  fuse_opt_add_arg(&args, "-odefault_permissions");
  fuse_opt_add_arg(&args, fsname.c_str());
  fuse_opt_add_arg(&args, "-osubtype=ckptfs");
  // A RADOS image has one writer, its node's daemon: a mount of it
  // elsewhere is read-only, in the kernel too.
  if (ckptfs::IsRadosSpec(config.store_path)) fuse_opt_add_arg(&args, "-oro");
  ckptfs::FuseContext ctx(/*filesystem=*/nullptr, config.fuse);  // the store once it is open
  fuse_lowlevel_ops ops = ckptfs::MakeFuseOperations();
  std::unique_ptr<fuse_session, decltype(&fuse_session_destroy)> session(
      fuse_session_new(&args, &ops, sizeof(ops), &ctx), &fuse_session_destroy);
  if (!session) return ckptfs::kExitUsage;  // libfuse has printed which option it refused
  fuse_session* se = session.get();
  ctx.session = se;

  // The restore cache is locked before any fork, so no other mount can take
  // it between the check and the child that serves.
  int cache_fd = -1;
  if (!config.cache.empty()) {
    auto locked = ckptfs::ImageCache::LockFile(config.cache);
    if (!locked.ok()) {
      std::fprintf(stderr, "ckptfs: cannot mount %s: cache=%s: %s\n", config.store_path.c_str(),
                   config.cache.c_str(), locked.status().ToString().c_str());
      return ckptfs::kExitFailed;
    }
    cache_fd = *locked;
  }
  // A daemon that forks serves from the child: the cache is attached there.
  auto opened = OpenStore(config, opts.foreground ? cache_fd : -1);
  if (!opened.ok()) {
    std::fprintf(stderr, "ckptfs: cannot mount %s: %s\n", config.store_path.c_str(),
                 opened.status().ToString().c_str());
    return ckptfs::kExitFailed;
  }
  std::unique_ptr<ckptfs::FileSystem> fs = std::move(opened).value();
  const uint64_t shortfall = fs->Stats().backing_shortfall_bytes;
  if (shortfall > 0 && !config.mount.read_only) {
    std::fprintf(stderr,
                 "ckptfs: warning: %s is a sparse file %.1f GiB larger than the free space left "
                 "under it; writes past that fail with ENOSPC (df on the mount counts only what "
                 "fits). mkfs.ckptfs preallocates unless given --sparse.\n",
                 config.store_path.c_str(), static_cast<double>(shortfall) / (1ull << 30));
  }

  std::unique_ptr<ckptfs::TierAttachment> tier;
  if (!config.tier.empty()) {
    auto target = RadosTargetOf(config.tier, config);  // checked by ParseMountConfig
    ckptfs::DrainOptions drain;
    drain.max_deferral = std::chrono::milliseconds(static_cast<int64_t>(config.drain_defer_seconds * 1000));
    if (config.drain_write_bytes != 0) drain.chunk_bytes = config.drain_write_bytes;
    // Read-only, the mount drains nothing: the image serves the runs the
    // store evicted to it.
    auto checked = config.mount.read_only ? ckptfs::TierAttachment::CheckReader(*target, fs.get())
                                          : ckptfs::TierAttachment::Check(*target, drain, fs.get());
    if (!checked.ok()) {
      std::fprintf(stderr, config.mount.read_only ? "ckptfs: cannot read the runs %s evicted to %s: %s\n"
                                                  : "ckptfs: cannot drain %s to %s: %s\n",
                   config.store_path.c_str(), config.tier.c_str(), checked.status().ToString().c_str());
      return ckptfs::kExitFailed;
    }
    tier = std::move(checked).value();
  }

  ctx.fs = fs.get();
  if (tier) ctx.tier_stats = [&tier] { return tier->Stats(); };
  ctx.metric_labels = {AbsolutePath(opts.mountpoint), ckptfs::IsRadosSpec(config.store_path)
                                                          ? config.store_path
                                                          : AbsolutePath(config.store_path.c_str())};
  std::unique_ptr<ckptfs::MetricsFile> metrics;
  if (!config.metrics_file.empty()) {
    metrics = std::make_unique<ckptfs::MetricsFile>(
        config.metrics_file, [&ctx](bool up) { return ckptfs::RenderStats(ctx, ckptfs::StatsFormat::kPrometheus, up); });
    // Written once before mounting: a path that cannot be written fails
    // the mount here, with the reason.
    if (ckptfs::Status written = metrics->Write(true); !written.ok()) {
      std::fprintf(stderr, "ckptfs: cannot mount %s: %s\n", config.store_path.c_str(), written.ToString().c_str());
      return ckptfs::kExitFailed;
    }
  }
  // Why the mount never served, if it did not; libfuse has printed the
  // details (say, that /dev/fuse cannot be opened).
  std::string not_served;
  int loop_rc = 0;
  if (fuse_set_signal_handlers(se) != 0) {
    not_served = "cannot install signal handlers";
  } else {
    if (fuse_session_mount(se, opts.mountpoint) != 0) {
      not_served = std::string("cannot mount on ") + opts.mountpoint;
    } else {
      ckptfs::Status channel = ckptfs::KernelChannel::Install(se);
      if (!channel.ok()) spdlog::warn("serving /dev/fuse through libfuse: {}", channel.ToString());
      if (config.read_ahead_kb > 0) {
        ckptfs::Status ra = ckptfs::SetMountReadAhead(opts.mountpoint, config.read_ahead_kb);
        if (!ra.ok()) spdlog::warn("readahead stays at the kernel default: {}", ra.ToString());
      }
      fuse_daemonize(opts.foreground);
      if (!opts.foreground && ckptfs::IsRadosSpec(config.store_path)) {
        // librados' threads did not survive the fork: open the image again.
        // The copy from before the fork cannot even be destroyed here (its
        // destructor would wait for those threads), so it is let go.
        (void)fs.release();
        auto again = OpenStore(config, cache_fd);
        if (!again.ok()) {
          spdlog::error("reopening {} after daemonizing: {}", config.store_path, again.status().ToString());
          std::_Exit(ckptfs::kExitFailed);
        }
        fs = std::move(again).value();
        ctx.fs = fs.get();
      }
      fs->Start();
      if (metrics) {
        if (ckptfs::Status started = metrics->Start(std::chrono::milliseconds(ckptfs::kMetricsIntervalMs));
            !started.ok()) {
          spdlog::warn("{}", started.ToString());
        }
      }
      spdlog::info("mounted {} on {}{}", config.store_path, opts.mountpoint,
                   config.mount.read_only ? " read-only" : "");
      if (tier) {
        // The store serves either way; what did not reach RADOS now is sent
        // by the next mount.
        ckptfs::Status started = tier->Start();
        if (!started.ok()) {
          spdlog::error("not {} {}: {}", config.mount.read_only ? "reading evicted runs from" : "draining to",
                        config.tier, started.ToString());
        }
      }
      pthread_sigmask(SIG_UNBLOCK, &termination, nullptr);
      if (opts.singlethread) {
        loop_rc = fuse_session_loop(se);
      } else {
        fuse_loop_config* loop = fuse_loop_cfg_create();
        fuse_loop_cfg_set_clone_fd(loop, opts.clone_fd);
        fuse_loop_cfg_set_max_threads(loop, opts.max_threads);
        loop_rc = fuse_session_loop_mt(se, loop);
        fuse_loop_cfg_destroy(loop);
      }
      fuse_session_unmount(se);
      // The ring's workers serve through the session: done before it goes.
      ctx.channel.StopRing();
    }
    fuse_remove_signal_handlers(se);
  }
  session.reset();
  if (metrics) metrics->Finish();  // ckptfs_up 0, with the figures at the unmount
  free(opts.mountpoint);
  fuse_opt_free_args(&args);

  ckptfs::Status closed = fs->Close();
  ckptfs::Status drained = ckptfs::Status::Ok();
  if (tier && closed.ok()) {
    drained = tier->Finish(std::chrono::milliseconds(static_cast<int64_t>(config.unmount_drain_seconds * 1000)));
  }
  if (!not_served.empty()) {
    // Scripts and fstab must not take this for a mount.
    std::fprintf(stderr, "ckptfs: %s: %s\n", config.store_path.c_str(), not_served.c_str());
    return ckptfs::kExitFailed;
  }
  if (!closed.ok()) {
    spdlog::error("flushing the store failed: {}; run ckptfs-fsck before mounting it again", closed.ToString());
    return ckptfs::kExitStoreFailed;
  }
  if (tier && !config.mount.read_only) {
    if (auto behind = UndrainedCommits(*tier, drained); !behind.empty()) {
      spdlog::error("{}", behind);
      return ckptfs::kExitNotDrained;
    }
  }
  spdlog::info("{}", config.mount.read_only ? "store closed, exiting" : "store flushed, exiting");
  // libfuse reports the signal that ended the loop; a stop by SIGTERM,
  // SIGINT or SIGHUP after a complete flush is a clean exit.
  const bool stopped_by_signal = loop_rc == SIGTERM || loop_rc == SIGINT || loop_rc == SIGHUP;
  return loop_rc == 0 || stopped_by_signal ? ckptfs::kExitClean : ckptfs::kExitFailed;
}
