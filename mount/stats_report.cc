// Stats rendering. The store's and the drain's figures come from their
// tables (ckptfs/store_stats.h, tier/drain_stats.h), each figure listed
// once with its kind and meaning; the JSON is written with nlohmann/json
// (ckptfs/stats_json.h), which the tools read back the same way.
#include "stats_report.h"

#include <cinttypes>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "ckptfs/stats_json.h"
#include "drain_stats_json.h"

namespace ckptfs {
namespace {

using Json = nlohmann::ordered_json;

// A figure of the FUSE counters, which are not a stats struct: a request
// count by operation, or by size.
struct Count {
  const char* name;
  uint64_t value;
};

// File bytes per stored byte of what is live, in thousandths: the
// compression ratio the store achieves now (1000 without compression).
uint64_t CompressionRatioMilli(const StoreStats& s) {
  if (s.live_bytes == 0) return 1000;
  return s.live_file_bytes * 1000 / s.live_bytes;
}

// Device bytes per user byte, in thousandths (an integer, like the rest).
uint64_t WriteAmplificationMilli(const StoreStats& s) {
  if (s.bytes_written == 0) return 0;
  return (s.data_device_bytes + s.metadata_device_bytes) * 1000 / s.bytes_written;
}

std::vector<Count> RequestCounts(const FuseCounters& f) {
  std::vector<Count> out;
  for (int i = 0; i < static_cast<int>(FuseOp::kCount); ++i) {
    uint64_t n = f.requests[i].load();
    if (n) out.push_back({FuseOpName(static_cast<FuseOp>(i)), n});
  }
  return out;
}

std::vector<Count> WriteSizeCounts(const FuseCounters& f) {
  static const char* kNames[] = {"le_4k", "le_64k", "le_256k", "le_1m", "gt_1m"};
  std::vector<Count> out;
  for (int b = 0; b < FuseCounters::kSizeBuckets; ++b) out.push_back({kNames[b], f.write_sizes[b].load()});
  return out;
}

Json ObjectOf(const std::vector<Count>& counts) {
  Json out = Json::object();
  for (const Count& c : counts) out[c.name] = c.value;
  return out;
}

// The figures of a stats struct, as its table lists them.
template <typename Stats, size_t N>
std::vector<Count> CountsOf(const Stats& stats, const StatField<Stats> (&fields)[N]) {
  std::vector<Count> out;
  for (const StatField<Stats>& f : fields) out.push_back({f.name, f.get(stats)});
  return out;
}

// "NAME VALUE" lines, the name padded to 24 columns after `prefix`.
void AppendLines(std::string* out, const char* prefix, const std::vector<Count>& counts) {
  char line[160];
  const int width = 24 - static_cast<int>(std::string(prefix).size());
  for (const Count& c : counts) {
    std::snprintf(line, sizeof line, "%s%-*s %llu\n", prefix, width, c.name, static_cast<unsigned long long>(c.value));
    *out += line;
  }
}

}  // namespace

std::string RenderStatsJson(const StoreStats& store, const FuseCounters& fuse, const ChannelStatus& channel,
                            const std::optional<DrainStats>& tier) {
  Json out = {{"store", store},
              {"write_amplification_milli", WriteAmplificationMilli(store)},
              {"compression_ratio_milli", CompressionRatioMilli(store)},
              {"read_only", store.read_only},
              {"channel", channel.name},
              {"ring_requests", channel.ring_requests},
              {"fuse_requests", ObjectOf(RequestCounts(fuse))},
              {"fuse_error_replies", fuse.error_replies.load()},
              {"write_request_sizes", ObjectOf(WriteSizeCounts(fuse))}};
  if (tier) {
    out["tier"] = *tier;
    out["tier_target"] = tier->target;
    out["tier_last_error"] = tier->last_error;
  }
  // An error message may quote bytes that are not UTF-8 (a path): they are
  // replaced, not refused.
  return out.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string RenderStatsText(const StoreStats& store, const FuseCounters& fuse, const ChannelStatus& channel,
                            const std::optional<DrainStats>& tier) {
  std::string out;
  char line[160];
  AppendLines(&out, "", CountsOf(store, kStoreStatFields));
  const uint64_t wa = WriteAmplificationMilli(store);
  std::snprintf(line, sizeof line, "%-24s %llu.%03llu\n", "write_amplification",
                static_cast<unsigned long long>(wa / 1000), static_cast<unsigned long long>(wa % 1000));
  out += line;
  const uint64_t ratio = CompressionRatioMilli(store);
  std::snprintf(line, sizeof line, "%-24s %llu.%03llu\n", "compression_ratio",
                static_cast<unsigned long long>(ratio / 1000),
                static_cast<unsigned long long>(ratio % 1000));
  out += line;
  std::snprintf(line, sizeof line, "%-24s %s\n", "read_only", store.read_only ? "true" : "false");
  out += line;
  std::snprintf(line, sizeof line, "%-24s %s\n%-24s %llu\n", "channel", channel.name.c_str(), "ring_requests",
                static_cast<unsigned long long>(channel.ring_requests));
  out += line;
  AppendLines(&out, "fuse.", RequestCounts(fuse));
  AppendLines(&out, "", {{"fuse_error_replies", fuse.error_replies.load()}});
  AppendLines(&out, "write_size.", WriteSizeCounts(fuse));
  if (tier) {
    out += "tier.target              " + tier->target + "\n";
    AppendLines(&out, "tier.", CountsOf(*tier, kDrainStatFields));
    if (!tier->last_error.empty()) out += "tier.last_error          " + tier->last_error + "\n";
  }
  return out;
}

namespace {

// A Prometheus label value: backslash, double quote and newline escaped.
std::string LabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// A figure's Prometheus name: ckptfs_[GROUP_]NAME with its unit last
// (bytes_written: written_bytes), milliseconds as seconds, and _total on a
// counter. Sets *millis when the value must be divided by 1000.
std::string MetricName(const char* group, const char* field, StatKind kind, bool* millis) {
  std::string name = field;
  *millis = false;
  const auto take_unit = [&name](const std::string& word) {
    // "bytes_" at the front or "_bytes_" inside: moved to the end.
    if (name.rfind(word + "_", 0) == 0) {
      name = name.substr(word.size() + 1) + "_" + word;
    } else if (const size_t at = name.find("_" + word + "_"); at != std::string::npos) {
      name = name.substr(0, at) + name.substr(at + word.size() + 1) + "_" + word;
    }
  };
  take_unit("bytes");
  if (name.size() > 3 && name.compare(name.size() - 3, 3, "_ms") == 0) {
    name = name.substr(0, name.size() - 3) + "_seconds";
    *millis = true;
  }
  std::string out = "ckptfs_";
  if (*group) out += std::string(group) + "_";
  out += name;
  if (kind == StatKind::kCounter) out += "_total";
  return out;
}

// Writes the metrics of Prometheus's text format (version 0.0.4).
class PrometheusWriter {
 public:
  explicit PrometheusWriter(const MetricLabels& labels)
      : labels_("mount=\"" + LabelValue(labels.mount) + "\",store=\"" + LabelValue(labels.store) + "\"") {}

  void Type(const std::string& name, StatKind kind, const std::string& help) {
    out_ += "# HELP " + name + " " + help + "\n";
    out_ += "# TYPE " + name + (kind == StatKind::kCounter ? " counter\n" : " gauge\n");
  }
  void Sample(const std::string& name, const std::string& extra_labels, const std::string& value) {
    out_ += name + "{" + labels_ + (extra_labels.empty() ? "" : "," + extra_labels) + "} " + value + "\n";
  }
  // One metric per figure of `fields` but those named in `skip`, named
  // after GROUP and the figure.
  template <typename Stats, size_t N>
  void Figures(const char* group, const char* json_object, const Stats& stats, const StatField<Stats> (&fields)[N],
               const char* skip = "") {
    for (const StatField<Stats>& f : fields) {
      if (std::string(skip) == f.name) continue;
      bool millis = false;
      const std::string name = MetricName(group, f.name, f.kind, &millis);
      Type(name, f.kind, std::string(f.help) + " (" + json_object + "." + f.name + ")");
      const uint64_t value = f.get(stats);
      Sample(name, "", millis ? Thousandths(value) : std::to_string(value));
    }
  }
  // An integer count of thousandths (milliseconds, milli-ratios) as a decimal.
  static std::string Thousandths(uint64_t ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
    return buf;
  }
  std::string Take() { return std::move(out_); }

 private:
  const std::string labels_;
  std::string out_;
};

}  // namespace

std::string RenderStatsPrometheus(const StoreStats& store, const FuseCounters& fuse, const ChannelStatus& channel,
                                  const std::optional<DrainStats>& tier, const MetricLabels& labels, bool up) {
  PrometheusWriter w(labels);
  w.Type("ckptfs_up", StatKind::kGauge, "1 while the daemon serves the mount, 0 in the file it leaves at exit");
  w.Sample("ckptfs_up", "", up ? "1" : "0");
  w.Type("ckptfs_store_info", StatKind::kGauge, "the store's id (store.store_id), as a label");
  w.Sample("ckptfs_store_info", "store_id=\"" + std::to_string(store.store_id) + "\"", "1");
  w.Figures("", "store", store, kStoreStatFields, /*skip=*/"store_id");  // the label above
  const uint64_t wa = WriteAmplificationMilli(store), ratio = CompressionRatioMilli(store);
  w.Type("ckptfs_write_amplification_ratio", StatKind::kGauge, "device bytes per user byte (write_amplification_milli / 1000)");
  w.Sample("ckptfs_write_amplification_ratio", "", PrometheusWriter::Thousandths(wa));
  w.Type("ckptfs_compression_ratio", StatKind::kGauge, "file bytes per stored byte of what is live (compression_ratio_milli / 1000)");
  w.Sample("ckptfs_compression_ratio", "", PrometheusWriter::Thousandths(ratio));
  w.Type("ckptfs_read_only", StatKind::kGauge, "1 when the store is read-only (mounted so, or after a failed commit)");
  w.Sample("ckptfs_read_only", "", store.read_only ? "1" : "0");
  w.Type("ckptfs_channel_info", StatKind::kGauge, "how requests reach the daemon (channel), as a label");
  w.Sample("ckptfs_channel_info", "channel=\"" + channel.name + "\"", "1");
  w.Type("ckptfs_ring_requests_total", StatKind::kCounter, "requests served through FUSE over io_uring (ring_requests)");
  w.Sample("ckptfs_ring_requests_total", "", std::to_string(channel.ring_requests));
  w.Type("ckptfs_fuse_requests_total", StatKind::kCounter, "FUSE requests by operation (fuse_requests)");
  for (int i = 0; i < static_cast<int>(FuseOp::kCount); ++i) {
    w.Sample("ckptfs_fuse_requests_total", std::string("op=\"") + FuseOpName(static_cast<FuseOp>(i)) + "\"",
             std::to_string(fuse.requests[i].load()));
  }
  w.Type("ckptfs_fuse_error_replies_total", StatKind::kCounter, "replies carrying an errno (fuse_error_replies)");
  w.Sample("ckptfs_fuse_error_replies_total", "", std::to_string(fuse.error_replies.load()));
  w.Type("ckptfs_fuse_write_requests_total", StatKind::kCounter, "WRITE requests by size (write_request_sizes)");
  for (const Count& c : WriteSizeCounts(fuse)) {
    w.Sample("ckptfs_fuse_write_requests_total", std::string("size=\"") + c.name + "\"", std::to_string(c.value));
  }
  if (tier) {
    w.Type("ckptfs_tier_info", StatKind::kGauge, "the RADOS image the store drains to (tier_target), as a label");
    w.Sample("ckptfs_tier_info", "target=\"" + LabelValue(tier->target) + "\"", "1");
    w.Figures("tier", "tier", *tier, kDrainStatFields);
    w.Type("ckptfs_tier_failing", StatKind::kGauge, "1 while the drain's last cycle failed (tier_last_error is set)");
    w.Sample("ckptfs_tier_failing", "", tier->last_error.empty() ? "0" : "1");
    if (!tier->last_error.empty()) {
      w.Type("ckptfs_tier_last_error_info", StatKind::kGauge, "the drain's last error (tier_last_error), as a label");
      w.Sample("ckptfs_tier_last_error_info", "error=\"" + LabelValue(tier->last_error) + "\"", "1");
    }
  }
  return w.Take();
}

const char* FuseOpName(FuseOp op) {
  static const char* kNames[] = {
      "lookup", "forget", "getattr", "setattr", "readlink", "mknod", "mkdir", "unlink",
      "rmdir", "symlink", "rename", "link", "open", "create", "read", "write",
      "flush", "release", "fsync", "opendir", "readdir", "readdirplus", "releasedir", "fsyncdir",
      "statfs", "setxattr", "getxattr", "listxattr", "removexattr", "fallocate", "batch_forget",
      "copy_file_range"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<int>(FuseOp::kCount));
  return kNames[static_cast<int>(op)];
}

}  // namespace ckptfs
