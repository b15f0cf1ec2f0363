// MountConfig parsing. Every -o option the daemon knows is one row of
// kOptions below: its name, what it takes, which mounts accept it, its help
// and how it sets the config (its parser and bounds). fuse_opt's spec, the
// parsing, the checks of which mounts take it and --help all follow from
// the table, so an option is written once.
#include "mount_config.h"

#include "compress/extent_codec.h"
#include "mountinfo.h"
#include "rados_target.h"
#include "util/size.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace ckptfs {
namespace {

// Which mounts accept an option.
enum class Scope {
  kAny,
  kCluster,  // reaches a Ceph cluster: with -o tier=, or a mount of rados:POOL/NAME
  kDrain,    // tunes the drain of -o tier=
  kLocal,    // a local store's, not a mount of rados:POOL/NAME
  kImage,    // a mount of rados:POOL/NAME's
};

// Who takes an option.
enum class Handling {
  kDaemon,    // ckptfs's own, taken out of the command line; a remount cannot change it
  kNoted,     // a mount option the daemon applies itself (the atime policies), taken out
  kHandedOn,  // noted, and handed on to libfuse too (ro, rw, noatime: it mounts with their flags)
  kIgnored,   // accepted and dropped (lazytime: the log batches inode writes already)
};

using Apply = Status (*)(const char* option, const char* value, MountConfig* config);

struct OptionSpec {
  const char* name;
  const char* value;  // what it takes, for --help ("SIZE"); null: a flag
  Handling handling;
  Scope scope;
  Apply apply;  // `option` is "NAME=VALUE" or "NAME", for messages; null with kIgnored
  // --help's text, each "\n" starting a line under the first; null: not
  // listed (shown with another). `shown_as` replaces NAME=VALUE there.
  const char* help;
  const char* shown_as = nullptr;
};

// "option NAME=VALUE: expected ...", the one way a bad value is refused.
Status Expected(const char* option, const std::string& what) {
  return Status::Invalid(std::string("option ") + option + ": expected " + what);
}

Result<double> ParseSeconds(const char* option, const char* text, double most = 86400) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  // Written so that NaN, which compares false with everything, fails too.
  if (end == text || *end != '\0' || !(v >= 0 && v <= most)) {
    return Expected(option, "seconds between 0 and " + std::to_string(static_cast<int>(most)));
  }
  return v;
}

Result<uint64_t> ParseCount(const char* option, const char* text, uint64_t lo, uint64_t hi) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  // strtoull takes a sign and negates: "-1" would be 2^64 - 1.
  if (!std::isdigit(static_cast<unsigned char>(text[0])) || end == text || *end != '\0' || errno != 0 || v < lo ||
      v > hi) {
    return Expected(option, "a number from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return static_cast<uint64_t>(v);
}

// A size (util/size.h) from `lo` to `hi`, a multiple of `multiple`;
// `expected` says so in words.
Result<uint64_t> ParseSizeIn(const char* option, const char* text, uint64_t lo, uint64_t hi, const char* expected,
                             uint64_t multiple = 1) {
  auto r = ParseSize(text);
  if (!r.ok() || *r < lo || *r > hi || *r % multiple != 0) return Expected(option, expected);
  return *r;
}

// One of `words`, as its index.
Result<size_t> ParseWord(const char* option, const char* text, std::initializer_list<const char*> words,
                         const char* expected) {
  size_t i = 0;
  for (const char* word : words) {
    if (std::strcmp(text, word) == 0) return i;
    ++i;
  }
  return Expected(option, expected);
}

constexpr uint64_t kUnbounded = ~0ull;

const OptionSpec kOptions[] = {
    {"memory", "SIZE", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(c->mount.memory_budget, ParseSizeIn(o, v, 64ull << 20, kUnbounded, "a size of at least 64M"));
       return Status::Ok();
     },
     "segment buffer budget (default 512M)"},
    {"flushers", "N", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(uint64_t n, ParseCount(o, v, 1, 16));
       c->mount.flusher_threads = static_cast<unsigned>(n);
       return Status::Ok();
     },
     "segment writer threads (default 2)"},
    {"commit_interval", "MS", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(uint64_t n, ParseCount(o, v, 10, 600000));
       c->mount.commit_interval_ms = static_cast<uint32_t>(n);
       return Status::Ok();
     },
     "background commit period (default 5000)"},
    {"attr_timeout", "S", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(c->fuse.attr_timeout, ParseSeconds(o, v));
       return Status::Ok();
     },
     "kernel attribute cache seconds (default 1)"},
    {"entry_timeout", "S", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(c->fuse.entry_timeout, ParseSeconds(o, v));
       return Status::Ok();
     },
     "kernel name cache seconds (default 1)"},
    {"io", "uring|posix", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(size_t i, ParseWord(o, v, {"uring", "posix"}, "uring or posix"));
       c->mount.use_uring = i == 0;
       return Status::Ok();
     },
     "device write path (default uring)"},
    {"read_ahead_kb", "N", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(uint64_t n, ParseCount(o, v, 0, 1 << 20));
       c->read_ahead_kb = static_cast<unsigned>(n);
       return Status::Ok();
     },
     "kernel readahead for the mount (default 1024, 0: kernel's)"},
    {"metrics_file", "PATH", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       // The daemon runs from / once it is in the background.
       if (v[0] != '/') return Status::Invalid(std::string("option ") + o + ": give an absolute path");
       c->metrics_file = v;
       return Status::Ok();
     },
     "keep the mount's Prometheus metrics in PATH (rewritten\n"
     "every 5 s, for node_exporter's textfile collector)"},
    {"uring", "auto|on|off", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       static constexpr UringMode kModes[] = {UringMode::kAuto, UringMode::kOn, UringMode::kOff};
       CKPTFS_ASSIGN_OR_RETURN(size_t i, ParseWord(o, v, {"auto", "on", "off"}, "auto, on or off"));
       c->fuse.uring = kModes[i];
       return Status::Ok();
     },
     "requests through FUSE over io_uring: where the kernel\n"
     "offers it (auto, the default), always (on: the mount\n"
     "fails where it cannot), or never (off)"},
    {"compress", "POLICY", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       auto policy = ParseCompressionPolicy(v);
       if (!policy.ok()) return Status::Invalid(std::string("option ") + o + ": " + policy.status().message());
       c->mount.compress = FormatCompressionPolicy(*policy);
       return Status::Ok();
     },
     "none or zstd[:LEVEL[:FILTER]] (default none); FILTER is\n"
     "auto, none, group2 (bf16/fp16) or group4 (fp32)"},
    {"compressors", "N", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(uint64_t n, ParseCount(o, v, 1, 64));
       c->mount.compressor_threads = static_cast<unsigned>(n);
       return Status::Ok();
     },
     "compressor threads (default 2)"},
    {"compress_backlog", "wait|raw", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(size_t i, ParseWord(o, v, {"wait", "raw"}, "wait or raw"));
       c->mount.compress_backlog_raw = i == 1;
       return Status::Ok();
     },
     "when compressors are behind: wait for them\n"
     "(default) or store new writes raw"},
    {"compress_when", "write|idle", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(size_t i, ParseWord(o, v, {"write", "idle"}, "write or idle"));
       c->mount.compress_when_idle = i == 1;
       return Status::Ok();
     },
     "compress as data arrives (default), or\n"
     "write raw and recompress when the mount is idle"},
    {"no_writeback_cache", nullptr, Handling::kDaemon, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->fuse.writeback_cache = false;
       return Status::Ok();
     },
     "send every write to the daemon at once"},
    {"page_cache", nullptr, Handling::kDaemon, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->fuse.direct_reads = DirectReads::kNever;
       return Status::Ok();
     },
     "read() through the page cache (default: past it on\n"
     "rados: mounts, and for read-only opens of files of\n"
     "4 MiB or more otherwise; mmap always uses it)"},
    {"prefetch", "SIZE", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(c->mount.prefetch_bytes, ParseSizeIn(o, v, 0, 1ull << 30, "a size up to 1G (0: off)"));
       return Status::Ok();
     },
     "load up to SIZE ahead of each reader that reads a file\n"
     "front to back (default 4M on rados: mounts read past\n"
     "the page cache, else 0: off)"},
    {"log_level", "LEVEL", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_RETURN_IF_ERROR(ParseWord(o, v, {"trace", "debug", "info", "warn", "error", "critical", "off"},
                                        "trace, debug, info, warn, error, critical or off")
                                  .status());
       c->log_level = v;
       return Status::Ok();
     },
     "trace, debug, info, warn, error, critical, off"},
    {"log_file", "PATH", Handling::kDaemon, Scope::kAny,
     [](const char*, const char* v, MountConfig* c) -> Status {
       c->log_file = v;
       return Status::Ok();
     },
     "log here instead of stderr/syslog"},
    {"nonempty", nullptr, Handling::kDaemon, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->allow_nonempty = true;
       return Status::Ok();
     },
     "allow mounting over a non-empty directory"},
    // The atime policies, as mount(8) and fstab lines give them: "atime"
    // and "norelatime" turn relatime off, so reads move atime every time.
    // The kernel leaves atime to a FUSE daemon; only noatime, which libfuse
    // knows, is handed on (it mounts with MS_NOATIME, so /proc/mounts says it).
    {"relatime", nullptr, Handling::kNoted, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->mount.atime = AtimePolicy::kRelatime;
       return Status::Ok();
     },
     "how reads move atime (default relatime,\n"
     "as on ext4: the first read after a change, or a day\n"
     "later); nodiratime leaves directories' alone",
     "relatime|strictatime|noatime"},
    {"strictatime", nullptr, Handling::kNoted, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->mount.atime = AtimePolicy::kStrictatime;
       return Status::Ok();
     },
     nullptr},
    {"norelatime", nullptr, Handling::kNoted, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->mount.atime = AtimePolicy::kStrictatime;
       return Status::Ok();
     },
     nullptr},
    {"atime", nullptr, Handling::kNoted, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->mount.atime = AtimePolicy::kStrictatime;
       return Status::Ok();
     },
     nullptr},
    {"noatime", nullptr, Handling::kHandedOn, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->mount.atime = AtimePolicy::kNoatime;
       return Status::Ok();
     },
     nullptr},
    {"nodiratime", nullptr, Handling::kNoted, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->mount.nodiratime = true;
       return Status::Ok();
     },
     nullptr},
    {"diratime", nullptr, Handling::kNoted, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->mount.nodiratime = false;
       return Status::Ok();
     },
     nullptr},
    {"lazytime", nullptr, Handling::kIgnored, Scope::kAny, nullptr, nullptr},
    {"nolazytime", nullptr, Handling::kIgnored, Scope::kAny, nullptr, nullptr},
    {"iversion", nullptr, Handling::kIgnored, Scope::kAny, nullptr, nullptr},
    {"noiversion", nullptr, Handling::kIgnored, Scope::kAny, nullptr, nullptr},
    // ro and rw are noted and handed on: libfuse mounts with MS_RDONLY for
    // ro, so the kernel refuses writes before they reach the daemon. The
    // last one given counts.
    {"ro", nullptr, Handling::kHandedOn, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->mount.read_only = true;
       return Status::Ok();
     },
     "read-only: nothing is written to the store; any number\n"
     "of read-only mounts may share it, a read-write one may not"},
    {"rw", nullptr, Handling::kHandedOn, Scope::kAny,
     [](const char*, const char*, MountConfig* c) -> Status {
       c->mount.read_only = false;
       return Status::Ok();
     },
     nullptr},
    {"wait", "S", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(c->busy_wait_seconds, ParseSeconds(o, v));
       return Status::Ok();
     },
     "if the store is still held by a daemon flushing it after\n"
     "an unmount, wait up to S seconds for it (default 60)"},
    {"tier", "rados:POOL/NAME", Handling::kDaemon, Scope::kLocal,
     [](const char*, const char* v, MountConfig* c) -> Status {
       // The spec's own message starts with the spec, as the option says it.
       auto target = ParseRadosSpec(v);
       if (!target.ok()) return Status::Invalid(std::string("option tier=") + target.status().message());
       c->tier = v;
       c->mount.track_committed_images = true;
       return Status::Ok();
     },
     "drain every commit to that RADOS image in the\n"
     "background (ckptfs-tier wait MNT: until it is there);\n"
     "with ro, only read the runs the store evicted to it"},
    {"ceph_conf", "PATH", Handling::kDaemon, Scope::kCluster,
     [](const char*, const char* v, MountConfig* c) -> Status {
       c->ceph_conf = v;
       return Status::Ok();
     },
     "the cluster's ceph.conf (default $CEPH_CONF, then Ceph's)"},
    {"ceph_id", "ID", Handling::kDaemon, Scope::kCluster,
     [](const char*, const char* v, MountConfig* c) -> Status {
       c->ceph_id = v;
       return Status::Ok();
     },
     "RADOS client id, without \"client.\" (default admin)"},
    {"rados_timeout", "S", Handling::kDaemon, Scope::kCluster,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       // Whole seconds: librados' timeouts take no fraction, and 0 means none.
       auto seconds = ParseSeconds(o, v, 3600);
       if (!seconds.ok() || *seconds < 1 || *seconds != static_cast<double>(static_cast<unsigned>(*seconds))) {
         return Expected(o, "whole seconds, 1 to 3600");
       }
       c->rados_timeout_seconds = static_cast<unsigned>(*seconds);
       return Status::Ok();
     },
     "longest wait for any RADOS call (default 30)"},
    {"unmount_drain", "S", Handling::kDaemon, Scope::kDrain,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(c->unmount_drain_seconds, ParseSeconds(o, v));
       return Status::Ok();
     },
     "at unmount, wait up to S seconds for the drain (default 60)"},
    {"drain_defer", "S", Handling::kDaemon, Scope::kDrain,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(c->drain_defer_seconds, ParseSeconds(o, v));
       return Status::Ok();
     },
     "while the mount takes a burst, hold the drain back up to S\n"
     "seconds (default 60; 0: drain at once)"},
    {"drain_write", "SIZE", Handling::kDaemon, Scope::kDrain,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       // Chunks are 4 KiB aligned in the image (docs/format.md); the drain
       // cuts them within a segment, so a size above the segment's is just
       // the segment. At least 1M: each write is a manifest entry of 12
       // bytes, and the manifest is written whole, in one RADOS write (Ceph
       // refuses writes over osd_max_write_size, 90 MB by default: 7 TB of
       // 1M chunks).
       CKPTFS_ASSIGN_OR_RETURN(c->drain_write_bytes, ParseSizeIn(o, v, 1 << 20, 32ull << 20,
                                                                 "a size from 1M to 32M, a multiple of 4K", 4096));
       return Status::Ok();
     },
     "the size of each RADOS write of the drain (default 2M,\n"
     "1M to 32M, a multiple of 4K)"},
    {"cache", "PATH", Handling::kDaemon, Scope::kImage,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       if (!*v) return Status::Invalid(std::string("option ") + o + " needs a file path");
       c->cache = v;
       return Status::Ok();
     },
     "with a rados:POOL/NAME source: keep what is read in the\n"
     "local file PATH and serve it from there next time"},
    {"cache_size", "SIZE", Handling::kDaemon, Scope::kAny,
     [](const char* o, const char* v, MountConfig* c) -> Status {
       CKPTFS_ASSIGN_OR_RETURN(c->cache_bytes, ParseSizeIn(o, v, 1 << 20, kUnbounded, "a size of at least 1M"));
       return Status::Ok();
     },
     "the most that file grows to (default: until the\n"
     "filesystem under it is full); then it keeps what it has"},
};

// fuse_opt's key of option i; below them, fuse_opt's own keys.
constexpr int kFirstKey = 1;

// What fuse_opt_parse found: the store, and ckptfs's options in the order given.
struct Given {
  char* store = nullptr;
  int positional = 0;
  std::vector<std::pair<const OptionSpec*, std::string>> options;  // the spec, and "NAME[=VALUE]"
};

// The first positional argument is the store; the second (the mountpoint)
// stays for fuse_parse_cmdline. Table options are noted, and handed on
// only as their row says.
int NoteOption(void* data, const char* arg, int key, fuse_args*) {
  auto* given = static_cast<Given*>(data);
  if (key >= kFirstKey && key < kFirstKey + static_cast<int>(std::size(kOptions))) {
    const OptionSpec& spec = kOptions[key - kFirstKey];
    if (spec.handling != Handling::kIgnored) given->options.emplace_back(&spec, arg);
    return spec.handling == Handling::kHandedOn ? 1 : 0;
  }
  if (key != FUSE_OPT_KEY_NONOPT) return 1;
  if (given->positional++ == 0) {
    given->store = strdup(arg);
    return 0;
  }
  return 1;
}

// fuse_opt's spec: "NAME=" (fuse_opt's prefix match) or "NAME" per row,
// keyed by its index.
class OptionTemplates {
 public:
  OptionTemplates() {
    templates_.reserve(std::size(kOptions));
    for (const OptionSpec& spec : kOptions) templates_.push_back(std::string(spec.name) + (spec.value ? "=" : ""));
    for (size_t i = 0; i < templates_.size(); ++i) {
      specs_.push_back(FUSE_OPT_KEY(templates_[i].c_str(), kFirstKey + static_cast<int>(i)));
    }
    specs_.push_back(FUSE_OPT_END);
  }
  const fuse_opt* specs() const { return specs_.data(); }

 private:
  std::vector<std::string> templates_;
  std::vector<fuse_opt> specs_;
};

// Refuses an option given where its scope says it does nothing: a typo in
// the tier= option, or one left out, would otherwise go unnoticed until the
// node was lost with nothing drained.
Status CheckScope(const OptionSpec& spec, const std::string& option, const MountConfig& config) {
  const bool image = IsRadosSpec(config.store_path);
  switch (spec.scope) {
    case Scope::kAny:
      return Status::Ok();
    case Scope::kCluster:
      if (!config.tier.empty() || image) return Status::Ok();
      return Status::Invalid("option " + std::string(spec.name) +
                             "= says how to reach a Ceph cluster, which only -o tier=rados:POOL/NAME or a mount "
                             "of rados:POOL/NAME uses");
    case Scope::kDrain:
      if (!config.tier.empty()) return Status::Ok();
      return Status::Invalid("option " + std::string(spec.name) +
                             "= tunes the drain of -o tier=rados:POOL/NAME, which is not given");
    case Scope::kLocal:
      if (!image) return Status::Ok();
      return Status::Invalid("option " + option + " is for a local store; a mount of " + config.store_path +
                             " reads that image itself");
    case Scope::kImage:
      if (image) return Status::Ok();
      return Status::Invalid("option " + option + " keeps what a mount of rados:POOL/NAME reads; a local store "
                             "needs no cache");
  }
  return Status::Ok();
}

}  // namespace

bool IsCkptfsOption(std::string_view name) {
  for (const OptionSpec& spec : kOptions) {
    if (spec.handling == Handling::kDaemon && name == spec.name) return true;
  }
  return false;
}

Status ParseMountConfig(fuse_args* args, MountConfig* config) {
  static const OptionTemplates templates;
  Given given;
  if (fuse_opt_parse(args, &given, templates.specs(), NoteOption) != 0) {
    return Status::Invalid("cannot parse options");
  }
  if (given.store) {
    // "ckptfs:PATH" is how /proc/mounts names the store (MountSource), and
    // so how mount(8) and fstab lines copied from it pass it on.
    config->store_path = StoreOfSource(given.store);
    free(given.store);
  }
  const bool image = IsRadosSpec(config->store_path);
  // A restore reads each byte of an image once: through the page cache it
  // costs a second copy and the cache's upkeep, a third of the CPU of a
  // restore on 2 cores. A local store's large read-only opens read direct
  // too: a restore's shards (PageCacheTracker::Open). -o page_cache says
  // otherwise.
  config->fuse.direct_reads = image ? DirectReads::kAlways : DirectReads::kLargeReadOnly;
  // Reads of a RADOS image wait a round trip each, and with direct reads
  // the kernel reads nothing ahead: the daemon does (with -o page_cache the
  // kernel's readahead is back). -o prefetch= says otherwise.
  bool page_cache = false;
  for (const auto& [spec, option] : given.options) page_cache = page_cache || std::strcmp(spec->name, "page_cache") == 0;
  if (image && !page_cache) config->mount.prefetch_bytes = kImagePrefetchBytes;

  // In the order given: of ro and rw, and of the atime policies, the last counts.
  for (const auto& [spec, option] : given.options) {
    const size_t eq = option.find('=');
    const std::string value = eq == std::string::npos ? "" : option.substr(eq + 1);
    CKPTFS_RETURN_IF_ERROR(spec->apply(option.c_str(), spec->value ? value.c_str() : nullptr, config));
  }
  config->mount.writes_set_mtime = !config->fuse.writeback_cache;
  // An image in RADOS is written only by its node's daemon: mounted
  // anywhere else it is read-only, asked or not.
  config->mount.read_only = config->mount.read_only || image;

  for (const auto& [spec, option] : given.options) CKPTFS_RETURN_IF_ERROR(CheckScope(*spec, option, *config));
  if (config->cache_bytes != 0 && config->cache.empty()) {
    return Status::Invalid("option cache_size= bounds the file of -o cache=PATH, which is not given");
  }
  return Status::Ok();
}

const char* MountOptionsHelp() {
  static const std::string help = [] {
    std::string out = "ckptfs options:\n";
    for (const OptionSpec& spec : kOptions) {
      if (!spec.help) continue;
      const std::string shown =
          spec.shown_as ? spec.shown_as : std::string(spec.name) + (spec.value ? std::string("=") + spec.value : "");
      // The text starts in column 27: after the name's, or two spaces past a longer one.
      std::string line = "    -o " + shown;
      line += line.size() < 26 ? std::string(27 - line.size(), ' ') : "  ";
      for (const char* p = spec.help; *p; ++p) {
        line += *p;
        if (*p == '\n') line += std::string(27, ' ');
      }
      out += line + "\n";
    }
    out +=
        "\n"
        "fusermount3 -u returns once the kernel has let go of the mount, before the\n"
        "daemon has written out what it buffers; the store stays locked until the\n"
        "daemon exits. A new mount of the same store waits for that (-o wait=S), and\n"
        "a script that needs the flush done waits for the daemon's pid or runs\n"
        "ckptfs-fsck, which waits the same way.\n";
    return out;
  }();
  return help.c_str();
}

}  // namespace ckptfs
