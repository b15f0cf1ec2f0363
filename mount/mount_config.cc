// MountConfig parsing with fuse_opt: every ckptfs option is matched by a
// template, stored as text, then converted and range-checked here so a bad
// value is refused with the option's name.
#include "mount_config.h"

#include "compress/extent_codec.h"
#include "mountinfo.h"
#include "rados_target.h"
#include "util/size.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ckptfs {
namespace {

struct RawOptions {
  char* memory = nullptr;
  char* flushers = nullptr;
  char* commit_interval = nullptr;
  char* attr_timeout = nullptr;
  char* entry_timeout = nullptr;
  char* log_level = nullptr;
  char* log_file = nullptr;
  char* io = nullptr;
  char* read_ahead_kb = nullptr;
  char* compress = nullptr;
  char* compressors = nullptr;
  char* compress_backlog = nullptr;
  char* compress_when = nullptr;
  char* wait = nullptr;
  char* tier = nullptr;
  char* ceph_conf = nullptr;
  char* ceph_id = nullptr;
  char* rados_timeout = nullptr;
  char* unmount_drain = nullptr;
  char* drain_defer = nullptr;
  char* drain_write = nullptr;
  char* cache = nullptr;
  char* cache_size = nullptr;
  char* prefetch = nullptr;
  char* uring = nullptr;
  char* metrics_file = nullptr;
  int no_writeback_cache = 0;
  int page_cache = 0;
  int nonempty = 0;
  int read_only = 0;  // the last of ro and rw
  AtimePolicy atime = AtimePolicy::kRelatime;  // the last atime policy given
  int nodiratime = 0;
  int positional = 0;
  char* store = nullptr;
};

// ro and rw are seen here and still handed on: libfuse mounts with
// MS_RDONLY for ro, so the kernel refuses writes before they reach the daemon.
// The atime policies are the daemon's (the kernel leaves atime to a FUSE
// daemon): taken here, and only noatime, which libfuse knows, handed on.
enum Key {
  kKeyReadOnly = 1,
  kKeyReadWrite,
  kKeyNoatime,
  kKeyRelatime,
  kKeyStrictatime,
  kKeyNodiratime,
  kKeyDiratime,
};

#define CKPTFS_OPT(t, p) {t, offsetof(RawOptions, p), 1}
const fuse_opt kOptionSpecs[] = {
    CKPTFS_OPT("memory=%s", memory),
    CKPTFS_OPT("flushers=%s", flushers),
    CKPTFS_OPT("commit_interval=%s", commit_interval),
    CKPTFS_OPT("attr_timeout=%s", attr_timeout),
    CKPTFS_OPT("entry_timeout=%s", entry_timeout),
    CKPTFS_OPT("log_level=%s", log_level),
    CKPTFS_OPT("log_file=%s", log_file),
    CKPTFS_OPT("io=%s", io),
    CKPTFS_OPT("read_ahead_kb=%s", read_ahead_kb),
    CKPTFS_OPT("compress=%s", compress),
    CKPTFS_OPT("compressors=%s", compressors),
    CKPTFS_OPT("compress_backlog=%s", compress_backlog),
    CKPTFS_OPT("compress_when=%s", compress_when),
    CKPTFS_OPT("wait=%s", wait),
    CKPTFS_OPT("tier=%s", tier),
    CKPTFS_OPT("ceph_conf=%s", ceph_conf),
    CKPTFS_OPT("ceph_id=%s", ceph_id),
    CKPTFS_OPT("rados_timeout=%s", rados_timeout),
    CKPTFS_OPT("unmount_drain=%s", unmount_drain),
    CKPTFS_OPT("drain_defer=%s", drain_defer),
    CKPTFS_OPT("drain_write=%s", drain_write),
    CKPTFS_OPT("cache=%s", cache),
    CKPTFS_OPT("cache_size=%s", cache_size),
    CKPTFS_OPT("prefetch=%s", prefetch),
    CKPTFS_OPT("uring=%s", uring),
    CKPTFS_OPT("metrics_file=%s", metrics_file),
    CKPTFS_OPT("no_writeback_cache", no_writeback_cache),
    CKPTFS_OPT("page_cache", page_cache),
    CKPTFS_OPT("nonempty", nonempty),
    FUSE_OPT_KEY("ro", kKeyReadOnly),
    FUSE_OPT_KEY("rw", kKeyReadWrite),
    // The atime policies, as mount(8) and fstab lines give them: "atime"
    // and "norelatime" turn relatime off, so reads move atime every time.
    FUSE_OPT_KEY("noatime", kKeyNoatime),
    FUSE_OPT_KEY("relatime", kKeyRelatime),
    FUSE_OPT_KEY("norelatime", kKeyStrictatime),
    FUSE_OPT_KEY("strictatime", kKeyStrictatime),
    FUSE_OPT_KEY("atime", kKeyStrictatime),
    FUSE_OPT_KEY("nodiratime", kKeyNodiratime),
    FUSE_OPT_KEY("diratime", kKeyDiratime),
    // lazytime batches the inode writes of time updates, which the
    // daemon's log already does.
    FUSE_OPT_KEY("lazytime", FUSE_OPT_KEY_DISCARD),
    FUSE_OPT_KEY("nolazytime", FUSE_OPT_KEY_DISCARD),
    FUSE_OPT_KEY("iversion", FUSE_OPT_KEY_DISCARD),
    FUSE_OPT_KEY("noiversion", FUSE_OPT_KEY_DISCARD),
    FUSE_OPT_END,
};
#undef CKPTFS_OPT

// The first positional argument is the store; the second (the mountpoint)
// stays for fuse_parse_cmdline. ro and rw are noted and kept for libfuse.
int KeepMountpoint(void* data, const char* arg, int key, fuse_args*) {
  auto* raw = static_cast<RawOptions*>(data);
  switch (key) {
    case kKeyReadOnly:
    case kKeyReadWrite:
      raw->read_only = key == kKeyReadOnly;
      return 1;
    case kKeyNoatime:
      // Handed on too: libfuse mounts with MS_NOATIME, so /proc/mounts says it.
      raw->atime = AtimePolicy::kNoatime;
      return 1;
    case kKeyRelatime:
      raw->atime = AtimePolicy::kRelatime;
      return 0;
    case kKeyStrictatime:
      raw->atime = AtimePolicy::kStrictatime;
      return 0;
    case kKeyNodiratime:
    case kKeyDiratime:
      raw->nodiratime = key == kKeyNodiratime;
      return 0;
    default:
      break;
  }
  if (key != FUSE_OPT_KEY_NONOPT) return 1;
  if (raw->positional++ == 0) {
    raw->store = strdup(arg);
    return 0;
  }
  return 1;
}

Result<double> ParseSeconds(const char* name, const char* text) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  // Written so that NaN, which compares false with everything, fails too.
  if (end == text || *end != '\0' || !(v >= 0 && v <= 86400)) {
    return Status::Invalid(std::string("option ") + name + "=" + text +
                           ": expected seconds between 0 and 86400");
  }
  return v;
}

Result<uint64_t> ParseCount(const char* name, const char* text, uint64_t lo, uint64_t hi) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  // strtoull takes a sign and negates: "-1" would be 2^64 - 1.
  if (!std::isdigit(static_cast<unsigned char>(text[0])) || end == text || *end != '\0' ||
      errno != 0 || v < lo || v > hi) {
    return Status::Invalid(std::string("option ") + name + "=" + text + ": expected a number from " +
                           std::to_string(lo) + " to " + std::to_string(hi));
  }
  return static_cast<uint64_t>(v);
}

}  // namespace

bool IsCkptfsOption(std::string_view name) {
  for (const fuse_opt* spec = kOptionSpecs; spec->templ; ++spec) {
    if (spec->offset == static_cast<unsigned long>(-1U)) continue;  // FUSE_OPT_KEY: ro, rw, atime policies
    std::string_view templ = spec->templ;
    if (templ.substr(0, templ.find('=')) == name) return true;
  }
  return false;
}

Status ParseMountConfig(fuse_args* args, MountConfig* config) {
  RawOptions raw;
  if (fuse_opt_parse(args, &raw, kOptionSpecs, KeepMountpoint) != 0) {
    return Status::Invalid("cannot parse options");
  }
  Status status;
  // The first option of a cluster, and of a drain, given (take() below
  // consumes them): checked against the tier once every option is known.
  const char* cluster_option = raw.ceph_conf ? "ceph_conf" : raw.ceph_id ? "ceph_id"
                               : raw.rados_timeout ? "rados_timeout" : nullptr;
  const char* drain_option = raw.drain_write ? "drain_write" : raw.drain_defer ? "drain_defer"
                             : raw.unmount_drain ? "unmount_drain" : nullptr;
  auto take = [&](char*& field, auto&& apply) {
    if (field && status.ok()) status = apply(field);
    free(field);
    field = nullptr;
  };
  take(raw.store, [&](const char* v) {
    // "ckptfs:PATH" is how /proc/mounts names the store (MountSource), and
    // so how mount(8) and fstab lines copied from it pass it on.
    config->store_path = StoreOfSource(v);
    return Status::Ok();
  });
  take(raw.memory, [&](const char* v) -> Status {
    auto r = ParseSize(v);
    if (!r.ok() || *r < (64ull << 20)) {
      return Status::Invalid(std::string("option memory=") + v + ": expected a size of at least 64M");
    }
    config->mount.memory_budget = *r;
    return Status::Ok();
  });
  take(raw.flushers, [&](const char* v) -> Status {
    CKPTFS_ASSIGN_OR_RETURN(uint64_t n, ParseCount("flushers", v, 1, 16));
    config->mount.flusher_threads = static_cast<unsigned>(n);
    return Status::Ok();
  });
  take(raw.commit_interval, [&](const char* v) -> Status {
    CKPTFS_ASSIGN_OR_RETURN(uint64_t n, ParseCount("commit_interval", v, 10, 600000));
    config->mount.commit_interval_ms = static_cast<uint32_t>(n);
    return Status::Ok();
  });
  take(raw.attr_timeout, [&](const char* v) -> Status {
    CKPTFS_ASSIGN_OR_RETURN(config->fuse.attr_timeout, ParseSeconds("attr_timeout", v));
    return Status::Ok();
  });
  take(raw.entry_timeout, [&](const char* v) -> Status {
    CKPTFS_ASSIGN_OR_RETURN(config->fuse.entry_timeout, ParseSeconds("entry_timeout", v));
    return Status::Ok();
  });
  take(raw.log_level, [&](const char* v) -> Status {
    static constexpr const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
    for (const char* level : kLevels) {
      if (std::strcmp(v, level) == 0) {
        config->log_level = v;
        return Status::Ok();
      }
    }
    return Status::Invalid(std::string("option log_level=") + v +
                           ": expected trace, debug, info, warn, error, critical or off");
  });
  take(raw.metrics_file, [&](const char* v) -> Status {
    // The daemon runs from / once it is in the background.
    if (v[0] != '/') return Status::Invalid(std::string("option metrics_file=") + v + ": give an absolute path");
    config->metrics_file = v;
    return Status::Ok();
  });
  take(raw.uring, [&](const char* v) -> Status {
    if (std::strcmp(v, "auto") == 0) {
      config->fuse.uring = UringMode::kAuto;
    } else if (std::strcmp(v, "on") == 0) {
      config->fuse.uring = UringMode::kOn;
    } else if (std::strcmp(v, "off") == 0) {
      config->fuse.uring = UringMode::kOff;
    } else {
      return Status::Invalid(std::string("option uring=") + v + ": expected auto, on or off");
    }
    return Status::Ok();
  });
  take(raw.read_ahead_kb, [&](const char* v) -> Status {
    CKPTFS_ASSIGN_OR_RETURN(uint64_t n, ParseCount("read_ahead_kb", v, 0, 1 << 20));
    config->read_ahead_kb = static_cast<unsigned>(n);
    return Status::Ok();
  });
  take(raw.compress, [&](const char* v) -> Status {
    auto policy = ParseCompressionPolicy(v);
    if (!policy.ok()) {
      return Status::Invalid(std::string("option compress=") + v + ": " +
                             policy.status().message());
    }
    config->mount.compress = FormatCompressionPolicy(*policy);
    return Status::Ok();
  });
  take(raw.compressors, [&](const char* v) -> Status {
    CKPTFS_ASSIGN_OR_RETURN(uint64_t n, ParseCount("compressors", v, 1, 64));
    config->mount.compressor_threads = static_cast<unsigned>(n);
    return Status::Ok();
  });
  take(raw.compress_backlog, [&](const char* v) -> Status {
    if (std::strcmp(v, "wait") == 0) config->mount.compress_backlog_raw = false;
    else if (std::strcmp(v, "raw") == 0) config->mount.compress_backlog_raw = true;
    else return Status::Invalid(std::string("option compress_backlog=") + v +
                                ": expected wait or raw");
    return Status::Ok();
  });
  take(raw.compress_when, [&](const char* v) -> Status {
    if (std::strcmp(v, "write") == 0) config->mount.compress_when_idle = false;
    else if (std::strcmp(v, "idle") == 0) config->mount.compress_when_idle = true;
    else return Status::Invalid(std::string("option compress_when=") + v +
                                ": expected write or idle");
    return Status::Ok();
  });
  take(raw.wait, [&](const char* v) -> Status {
    CKPTFS_ASSIGN_OR_RETURN(config->busy_wait_seconds, ParseSeconds("wait", v));
    return Status::Ok();
  });
  take(raw.log_file, [&](const char* v) { config->log_file = v; return Status::Ok(); });
  take(raw.io, [&](const char* v) -> Status {
    if (std::strcmp(v, "uring") == 0) config->mount.use_uring = true;
    else if (std::strcmp(v, "posix") == 0) config->mount.use_uring = false;
    else return Status::Invalid(std::string("option io=") + v + ": expected uring or posix");
    return Status::Ok();
  });
  take(raw.tier, [&](const char* v) -> Status {
    auto target = ParseRadosSpec(v);
    if (!target.ok()) return Status::Invalid("option tier=" + target.status().message());
    config->tier = v;
    config->mount.track_committed_images = true;
    return Status::Ok();
  });
  take(raw.ceph_conf, [&](const char* v) { config->ceph_conf = v; return Status::Ok(); });
  take(raw.ceph_id, [&](const char* v) { config->ceph_id = v; return Status::Ok(); });
  take(raw.rados_timeout, [&](const char* v) -> Status {
    CKPTFS_ASSIGN_OR_RETURN(double seconds, ParseSeconds("rados_timeout", v));
    // Whole seconds: librados' timeouts take no fraction, and 0 means none.
    if (seconds < 1 || seconds > 3600 || seconds != static_cast<double>(static_cast<unsigned>(seconds))) {
      return Status::Invalid(std::string("option rados_timeout=") + v + ": expected whole seconds, 1 to 3600");
    }
    config->rados_timeout_seconds = static_cast<unsigned>(seconds);
    return Status::Ok();
  });
  take(raw.cache, [&](const char* v) -> Status {
    if (!*v) return Status::Invalid("option cache= needs a file path");
    config->cache = v;
    return Status::Ok();
  });
  take(raw.cache_size, [&](const char* v) -> Status {
    auto r = ParseSize(v);
    if (!r.ok() || *r < (1 << 20)) {
      return Status::Invalid(std::string("option cache_size=") + v + ": expected a size of at least 1M");
    }
    config->cache_bytes = *r;
    return Status::Ok();
  });
  // Reads of a RADOS image wait a round trip each, and with direct reads the
  // kernel reads nothing ahead: the daemon does (with -o page_cache the
  // kernel's readahead is back).
  if (IsRadosSpec(config->store_path) && !raw.page_cache) config->mount.prefetch_bytes = kImagePrefetchBytes;
  take(raw.prefetch, [&](const char* v) -> Status {
    auto r = ParseSize(v);
    if (!r.ok() || *r > (1ull << 30)) {
      return Status::Invalid(std::string("option prefetch=") + v + ": expected a size up to 1G (0: off)");
    }
    config->mount.prefetch_bytes = *r;
    return Status::Ok();
  });
  take(raw.drain_defer, [&](const char* v) -> Status {
    CKPTFS_ASSIGN_OR_RETURN(config->drain_defer_seconds, ParseSeconds("drain_defer", v));
    return Status::Ok();
  });
  take(raw.drain_write, [&](const char* v) -> Status {
    // Chunks are 4 KiB aligned in the image (docs/format.md); the drain cuts
    // them within a segment, so a size above the segment's is just the
    // segment. At least 1M: each write is a manifest entry of 12 bytes, and
    // the manifest is written whole, in one RADOS write (Ceph refuses writes
    // over osd_max_write_size, 90 MB by default: 7 TB of 1M chunks).
    auto r = ParseSize(v);
    if (!r.ok() || *r < (1 << 20) || *r > (1 << 20) * 32ull || *r % 4096 != 0) {
      return Status::Invalid(std::string("option drain_write=") + v +
                             ": expected a size from 1M to 32M, a multiple of 4K");
    }
    config->drain_write_bytes = *r;
    return Status::Ok();
  });
  take(raw.unmount_drain, [&](const char* v) -> Status {
    CKPTFS_ASSIGN_OR_RETURN(config->unmount_drain_seconds, ParseSeconds("unmount_drain", v));
    return Status::Ok();
  });
  config->fuse.writeback_cache = !raw.no_writeback_cache;
  config->mount.writes_set_mtime = !config->fuse.writeback_cache;
  config->allow_nonempty = raw.nonempty;
  config->mount.atime = raw.atime;
  config->mount.nodiratime = raw.nodiratime;
  // An image in RADOS is written only by its node's daemon: mounted
  // anywhere else it is read-only, asked or not.
  config->mount.read_only = raw.read_only || IsRadosSpec(config->store_path);
  // A restore reads each byte of an image once: through the page cache it
  // costs a second copy and the cache's upkeep, a third of the CPU of a
  // restore on 2 cores.
  // A local store's large read-only opens read direct too: a restore's
  // shards (PageCacheTracker::Open).
  config->fuse.direct_reads = raw.page_cache                   ? DirectReads::kNever
                              : IsRadosSpec(config->store_path) ? DirectReads::kAlways
                                                                : DirectReads::kLargeReadOnly;
  if (status.ok() && !config->cache.empty() && !IsRadosSpec(config->store_path)) {
    status = Status::Invalid("option cache=" + config->cache + " keeps what a mount of rados:POOL/NAME reads; a "
                             "local store needs no cache");
  }
  if (status.ok() && config->cache_bytes != 0 && config->cache.empty()) {
    status = Status::Invalid("option cache_size= bounds the file of -o cache=PATH, which is not given");
  }
  if (status.ok() && !config->tier.empty() && IsRadosSpec(config->store_path)) {
    status = Status::Invalid("option tier=" + config->tier + " is for a local store; a mount of " +
                             config->store_path + " reads that image itself");
  }
  // Options of a tier or of a cluster that none uses: a typo in the tier=
  // option, or one left out, would otherwise go unnoticed until the node
  // was lost with nothing drained.
  if (status.ok() && cluster_option && config->tier.empty() && !IsRadosSpec(config->store_path)) {
    status = Status::Invalid(std::string("option ") + cluster_option +
                             "= says how to reach a Ceph cluster, which only -o tier=rados:POOL/NAME or a mount "
                             "of rados:POOL/NAME uses");
  }
  if (status.ok() && drain_option && config->tier.empty()) {
    status = Status::Invalid(std::string("option ") + drain_option +
                             "= tunes the drain of -o tier=rados:POOL/NAME, which is not given");
  }
  return status;
}

const char* MountOptionsHelp() {
  return "ckptfs options:\n"
         "    -o memory=SIZE         segment buffer budget (default 512M)\n"
         "    -o flushers=N          segment writer threads (default 2)\n"
         "    -o commit_interval=MS  background commit period (default 5000)\n"
         "    -o attr_timeout=S      kernel attribute cache seconds (default 1)\n"
         "    -o entry_timeout=S     kernel name cache seconds (default 1)\n"
         "    -o io=uring|posix      device write path (default uring)\n"
         "    -o read_ahead_kb=N     kernel readahead for the mount (default 1024, 0: kernel's)\n"
         "    -o metrics_file=PATH   keep the mount's Prometheus metrics in PATH (rewritten\n"
         "                           every 5 s, for node_exporter's textfile collector)\n"
         "    -o uring=auto|on|off   requests through FUSE over io_uring: where the kernel\n"
         "                           offers it (auto, the default), always (on: the mount\n"
         "                           fails where it cannot), or never (off)\n"
         "    -o compress=POLICY     none or zstd[:LEVEL[:FILTER]] (default none); FILTER is\n"
         "                           auto, none, group2 (bf16/fp16) or group4 (fp32)\n"
         "    -o compressors=N       compressor threads (default 2)\n"
         "    -o compress_backlog=wait|raw  when compressors are behind: wait for them\n"
         "                           (default) or store new writes raw\n"
         "    -o compress_when=write|idle  compress as data arrives (default), or\n"
         "                           write raw and recompress when the mount is idle\n"
         "    -o no_writeback_cache  send every write to the daemon at once\n"
         "    -o page_cache          read() through the page cache (default: past it on\n"
         "                           rados: mounts, and for read-only opens of files of\n"
         "                           4 MiB or more otherwise; mmap always uses it)\n"
         "    -o prefetch=SIZE       load up to SIZE ahead of each reader that reads a file\n"
         "                           front to back (default 4M on rados: mounts read past\n"
         "                           the page cache, else 0: off)\n"
         "    -o log_level=LEVEL     trace, debug, info, warn, error, critical, off\n"
         "    -o log_file=PATH       log here instead of stderr/syslog\n"
         "    -o nonempty            allow mounting over a non-empty directory\n"
         "    -o relatime|strictatime|noatime  how reads move atime (default relatime,\n"
         "                           as on ext4: the first read after a change, or a day\n"
         "                           later); nodiratime leaves directories' alone\n"
         "    -o ro                  read-only: nothing is written to the store; any number\n"
         "                           of read-only mounts may share it, a read-write one may not\n"
         "    -o wait=S              if the store is still held by a daemon flushing it after\n"
         "                           an unmount, wait up to S seconds for it (default 60)\n"
         "    -o tier=rados:POOL/NAME  drain every commit to that RADOS image in the\n"
         "                           background (ckptfs-tier wait MNT: until it is there);\n"
         "                           with ro, only read the runs the store evicted to it\n"
         "    -o ceph_conf=PATH      the cluster's ceph.conf (default $CEPH_CONF, then Ceph's)\n"
         "    -o ceph_id=ID          RADOS client id, without \"client.\" (default admin)\n"
         "    -o rados_timeout=S     longest wait for any RADOS call (default 30)\n"
         "    -o unmount_drain=S     at unmount, wait up to S seconds for the drain (default 60)\n"
         "    -o drain_defer=S       while the mount takes a burst, hold the drain back up to S\n"
         "                           seconds (default 60; 0: drain at once)\n"
         "    -o drain_write=SIZE    the size of each RADOS write of the drain (default 2M,\n"
         "                           1M to 32M, a multiple of 4K)\n"
         "    -o cache=PATH          with a rados:POOL/NAME source: keep what is read in the\n"
         "                           local file PATH and serve it from there next time\n"
         "    -o cache_size=SIZE     the most that file grows to (default: until the\n"
         "                           filesystem under it is full); then it keeps what it has\n"
         "\n"
         "fusermount3 -u returns once the kernel has let go of the mount, before the\n"
         "daemon has written out what it buffers; the store stays locked until the\n"
         "daemon exits. A new mount of the same store waits for that (-o wait=S), and\n"
         "a script that needs the flush done waits for the daemon's pid or runs\n"
         "ckptfs-fsck, which waits the same way.\n";
}

}  // namespace ckptfs
