// ckptfs daemon: ckptfs STORE MOUNTPOINT [-f] [-d] [-o opt,...]
// Opens and replays the store before mounting (so errors reach the
// terminal), mounts, daemonizes, serves, and on unmount or SIGTERM writes
// everything out before exiting 0.
#include <dirent.h>
#include <malloc.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "ckptfs/filesystem.h"
#include "ckptfs/version.h"
#include "fuse_ops.h"
#include "mount_config.h"
#include "mountinfo.h"
#include "read_ahead.h"

namespace {

void Usage(const char* prog) {
  std::printf("usage: %s STORE MOUNTPOINT [options]\n\n", prog);
  std::printf("Mounts the ckptfs store at STORE (made by mkfs.ckptfs) on MOUNTPOINT.\n\n");
  std::printf("%s\n", ckptfs::MountOptionsHelp());
  fuse_cmdline_help();
  fuse_lowlevel_help();
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

void SetUpLogging(const ckptfs::MountConfig& config, bool foreground) {
  std::shared_ptr<spdlog::logger> logger;
  if (!config.log_file.empty()) {
    logger = spdlog::basic_logger_mt("ckptfs", config.log_file);
  } else if (foreground) {
    logger = spdlog::stderr_color_mt("ckptfs");
  } else {
    logger = spdlog::syslog_logger_mt("ckptfs", "ckptfs", LOG_PID, LOG_DAEMON);
  }
  logger->set_level(spdlog::level::from_str(config.log_level));
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char* argv[]) {
  // Read buffers and cached runs are 128 KiB-1 MiB and short-lived. With
  // glibc's adaptive threshold they soon come from per-thread heaps, which
  // keep the memory after free: one 1 GiB O_DIRECT read left the daemon at
  // 850 MB resident, far over its budget. A fixed threshold maps and unmaps
  // them (184 MB after the same read).
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
  fuse_args args = FUSE_ARGS_INIT(argc, argv);
  ckptfs::MountConfig config;
  ckptfs::Status parsed = ckptfs::ParseMountConfig(&args, &config);
  if (!parsed.ok()) {
    std::fprintf(stderr, "ckptfs: %s\n", parsed.message().c_str());
    return 2;
  }
  fuse_cmdline_opts opts{};
  if (fuse_parse_cmdline(&args, &opts) != 0) return 2;
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
    return 2;
  }
  ckptfs::Status mp = CheckMountpoint(opts.mountpoint, config.allow_nonempty);
  if (!mp.ok()) {
    std::fprintf(stderr, "ckptfs: %s\n", mp.ToString().c_str());
    return 1;
  }
  SetUpLogging(config, opts.foreground);

  auto opened = ckptfs::FileSystem::Open(config.store_path, config.mount);
  if (!opened.ok()) {
    std::fprintf(stderr, "ckptfs: cannot mount %s: %s\n", config.store_path.c_str(),
                 opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<ckptfs::FileSystem> fs = std::move(opened).value();

  std::string fsname = "-ofsname=ckptfs:" + config.store_path;
  fuse_opt_add_arg(&args, "-odefault_permissions");
  fuse_opt_add_arg(&args, fsname.c_str());
  fuse_opt_add_arg(&args, "-osubtype=ckptfs");

  ckptfs::FuseContext ctx{fs.get(), config.fuse, {}};
  fuse_lowlevel_ops ops = ckptfs::MakeFuseOperations();
  fuse_session* se = fuse_session_new(&args, &ops, sizeof(ops), &ctx);
  if (!se) {
    // libfuse has printed which option it refused.
    fuse_opt_free_args(&args);
    return 2;
  }
  int rc = 1;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, opts.mountpoint) == 0) {
      if (config.read_ahead_kb > 0) {
        ckptfs::Status ra = ckptfs::SetMountReadAhead(opts.mountpoint, config.read_ahead_kb);
        if (!ra.ok()) spdlog::warn("readahead stays at the kernel default: {}", ra.ToString());
      }
      fuse_daemonize(opts.foreground);
      fs->Start();
      spdlog::info("mounted {} on {}", config.store_path, opts.mountpoint);
      if (opts.singlethread) {
        rc = fuse_session_loop(se);
      } else {
        fuse_loop_config* loop = fuse_loop_cfg_create();
        fuse_loop_cfg_set_clone_fd(loop, opts.clone_fd);
        fuse_loop_cfg_set_max_threads(loop, opts.max_threads);
        rc = fuse_session_loop_mt(se, loop);
        fuse_loop_cfg_destroy(loop);
      }
      fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  free(opts.mountpoint);
  fuse_opt_free_args(&args);

  ckptfs::Status closed = fs->Close();
  if (!closed.ok()) {
    spdlog::error("flushing the store failed: {}", closed.ToString());
    return 1;
  }
  spdlog::info("store flushed, exiting");
  // libfuse reports the signal that ended the loop; a stop by SIGTERM,
  // SIGINT or SIGHUP after a complete flush is a clean exit.
  const bool stopped_by_signal = rc == SIGTERM || rc == SIGINT || rc == SIGHUP;
  return rc == 0 || stopped_by_signal ? 0 : 1;
}
