// Stats rendering. The JSON is flat objects of integers (and the one
// boolean read_only), written by hand: no dependency, and trivially parsed
// by any client. Each figure is listed once, with its kind, and the three
// renderings (text, JSON, Prometheus) follow from the lists.
#include "stats_report.h"

#include <cinttypes>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace ckptfs {
namespace {

// How Prometheus reads a figure: a counter only grows while the daemon
// runs; a gauge is a level now.
enum class Kind { kCounter, kGauge };
constexpr Kind kCounter = Kind::kCounter;
constexpr Kind kGauge = Kind::kGauge;

struct Field {
  const char* first;  // its name in the JSON and the text
  uint64_t second;
  Kind kind = kCounter;
};

std::vector<Field> StoreFields(const StoreStats& s) {
  return {{"store_id", s.store_id, kGauge},
          {"bytes_written", s.bytes_written},
          {"bytes_read", s.bytes_read},
          {"read_errors", s.read_errors},
          {"stored_runs_written", s.appends},
          {"data_device_bytes", s.data_device_bytes},
          {"metadata_device_bytes", s.metadata_device_bytes},
          {"segments_written", s.segments_written},
          {"partial_flushes", s.partial_flushes},
          {"buffer_waits", s.buffer_waits},
          {"read_cache_hits", s.read_cache_hits},
          {"read_cache_misses", s.read_cache_misses},
          {"prefetched_runs", s.prefetched_runs},
          {"prefetch_pending", s.prefetch_pending, kGauge},
          {"commits", s.commits},
          {"log_compactions", s.log_compactions},
          {"cleaner_bytes_moved", s.cleaner_bytes_moved},
          {"cleaner_segments", s.cleaner_segments},
          {"evicted_segments", s.evicted_segments},
          {"evicted_bytes", s.evicted_bytes},
          {"remote_objects", s.remote_objects, kGauge},
          {"remote_live_bytes", s.remote_live_bytes, kGauge},
          {"remote_reads", s.remote_reads},
          {"remote_read_bytes", s.remote_read_bytes},
          {"cache_hit_bytes", s.cache_hit_bytes},
          {"cache_fill_bytes", s.cache_fill_bytes},
          {"segment_size", s.segment_size, kGauge},
          {"segments_total", s.segments_total, kGauge},
          {"segments_free", s.segments_free, kGauge},
          {"segments_data", s.segments_data, kGauge},
          {"segments_meta", s.segments_meta, kGauge},
          {"segments_pending_free", s.segments_pending_free, kGauge},
          {"live_bytes", s.live_bytes, kGauge},
          {"live_file_bytes", s.live_file_bytes, kGauge},
          {"dead_bytes", s.dead_bytes, kGauge},
          {"fallocated_bytes", s.fallocated_bytes, kGauge},
          {"shared_bytes", s.shared_bytes, kGauge},
          {"bytes_copied", s.bytes_copied},
          {"inodes", s.inodes, kGauge},
          {"compressed_runs", s.compressed_runs},
          {"compress_raw_runs", s.compress_raw_runs},
          {"compress_bytes_in", s.compress_bytes_in},
          {"compress_bytes_out", s.compress_bytes_out},
          {"compress_pending_bytes", s.compress_pending_bytes, kGauge},
          {"compress_waits", s.compress_waits},
          {"compress_skipped_runs", s.compress_skipped_runs},
          {"runs_decoded", s.runs_decoded},
          {"backing_shortfall_bytes", s.backing_shortfall_bytes, kGauge}};
}

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

void AppendObject(std::string* out, const char* name, const std::vector<Field>& fields) {
  *out += "\"";
  *out += name;
  *out += "\":{";
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) *out += ",";
    *out += "\"";
    *out += fields[i].first;
    *out += "\":";
    *out += std::to_string(fields[i].second);
  }
  *out += "}";
}

std::vector<Field> RequestFields(const FuseCounters& f) {
  std::vector<Field> out;
  for (int i = 0; i < static_cast<int>(FuseOp::kCount); ++i) {
    uint64_t n = f.requests[i].load();
    if (n) out.push_back({FuseOpName(static_cast<FuseOp>(i)), n});
  }
  return out;
}

std::vector<Field> WriteSizeFields(const FuseCounters& f) {
  static const char* kNames[] = {"le_4k", "le_64k", "le_256k", "le_1m", "gt_1m"};
  std::vector<Field> out;
  for (int b = 0; b < FuseCounters::kSizeBuckets; ++b) out.push_back({kNames[b], f.write_sizes[b].load()});
  return out;
}

std::vector<Field> TierFields(const DrainStats& t) {
  return {{"published", t.published ? 1u : 0u, kGauge},
          {"committed_lsn", t.committed_lsn, kGauge},
          {"drained_lsn", t.drained_lsn, kGauge},
          {"behind_bytes", t.behind_bytes, kGauge},
          {"behind_ms", t.behind_ms, kGauge},
          {"uploaded_bytes", t.uploaded_bytes},
          {"adopted_bytes", t.adopted_bytes},
          {"image_bytes", t.image_bytes, kGauge},
          {"manifests_published", t.manifests_published},
          {"objects_removed", t.objects_removed},
          {"errors", t.errors},
          {"retries", t.retries},
          {"deferred_ms", t.deferred_ms},
          {"sending_ms", t.sending_ms},
          {"held_send_buffers", t.held_send_buffers, kGauge},
          {"fenced", t.fenced ? 1u : 0u, kGauge}};
}

// A JSON string literal of `s`.
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string RenderStatsJson(const StoreStats& store, const FuseCounters& fuse, const ChannelStatus& channel,
                            const std::optional<DrainStats>& tier) {
  std::string out = "{";
  AppendObject(&out, "store", StoreFields(store));
  out += ",\"write_amplification_milli\":" + std::to_string(WriteAmplificationMilli(store));
  out += ",\"compression_ratio_milli\":" + std::to_string(CompressionRatioMilli(store));
  out += std::string(",\"read_only\":") + (store.read_only ? "true" : "false") + ",";
  out += "\"channel\":" + Quoted(channel.name) + ",\"ring_requests\":" + std::to_string(channel.ring_requests) + ",";
  AppendObject(&out, "fuse_requests", RequestFields(fuse));
  out += ",\"fuse_error_replies\":" + std::to_string(fuse.error_replies.load()) + ",";
  AppendObject(&out, "write_request_sizes", WriteSizeFields(fuse));
  if (tier) {
    out += ",";
    AppendObject(&out, "tier", TierFields(*tier));
    out += ",\"tier_target\":" + Quoted(tier->target) + ",\"tier_last_error\":" + Quoted(tier->last_error);
  }
  out += "}\n";
  return out;
}

std::string RenderStatsText(const StoreStats& store, const FuseCounters& fuse, const ChannelStatus& channel,
                            const std::optional<DrainStats>& tier) {
  std::string out;
  char line[160];
  for (const Field& f : StoreFields(store)) {
    std::snprintf(line, sizeof line, "%-24s %llu\n", f.first, static_cast<unsigned long long>(f.second));
    out += line;
  }
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
  for (const Field& f : RequestFields(fuse)) {
    std::snprintf(line, sizeof line, "fuse.%-19s %llu\n", f.first, static_cast<unsigned long long>(f.second));
    out += line;
  }
  std::snprintf(line, sizeof line, "%-24s %llu\n", "fuse_error_replies",
                static_cast<unsigned long long>(fuse.error_replies.load()));
  out += line;
  for (const Field& f : WriteSizeFields(fuse)) {
    std::snprintf(line, sizeof line, "write_size.%-13s %llu\n", f.first,
                  static_cast<unsigned long long>(f.second));
    out += line;
  }
  if (tier) {
    out += "tier.target              " + tier->target + "\n";
    for (const Field& f : TierFields(*tier)) {
      std::snprintf(line, sizeof line, "tier.%-19s %llu\n", f.first, static_cast<unsigned long long>(f.second));
      out += line;
    }
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
std::string MetricName(const char* group, const char* field, Kind kind, bool* millis) {
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
  if (kind == kCounter) out += "_total";
  return out;
}

// Writes the metrics of Prometheus's text format (version 0.0.4).
class PrometheusWriter {
 public:
  explicit PrometheusWriter(const MetricLabels& labels)
      : labels_("mount=\"" + LabelValue(labels.mount) + "\",store=\"" + LabelValue(labels.store) + "\"") {}

  void Type(const std::string& name, Kind kind, const std::string& help) {
    out_ += "# HELP " + name + " " + help + "\n";
    out_ += "# TYPE " + name + (kind == kCounter ? " counter\n" : " gauge\n");
  }
  void Sample(const std::string& name, const std::string& extra_labels, const std::string& value) {
    out_ += name + "{" + labels_ + (extra_labels.empty() ? "" : "," + extra_labels) + "} " + value + "\n";
  }
  // One metric per field of `fields`, named after GROUP and the field.
  void Fields(const char* group, const char* json_object, const std::vector<Field>& fields) {
    for (const Field& f : fields) {
      bool millis = false;
      const std::string name = MetricName(group, f.first, f.kind, &millis);
      Type(name, f.kind, std::string(json_object) + "." + f.first + " of ckptfs-stat --json");
      Sample(name, "", millis ? Thousandths(f.second) : std::to_string(f.second));
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
  w.Type("ckptfs_up", kGauge, "1 while the daemon serves the mount, 0 in the file it leaves at exit");
  w.Sample("ckptfs_up", "", up ? "1" : "0");
  w.Type("ckptfs_store_info", kGauge, "the store's id (store.store_id), as a label");
  w.Sample("ckptfs_store_info", "store_id=\"" + std::to_string(store.store_id) + "\"", "1");
  std::vector<Field> fields = StoreFields(store);
  fields.erase(fields.begin());  // store_id: the label above
  w.Fields("", "store", fields);
  const uint64_t wa = WriteAmplificationMilli(store), ratio = CompressionRatioMilli(store);
  w.Type("ckptfs_write_amplification_ratio", kGauge, "device bytes per user byte (write_amplification_milli / 1000)");
  w.Sample("ckptfs_write_amplification_ratio", "", PrometheusWriter::Thousandths(wa));
  w.Type("ckptfs_compression_ratio", kGauge, "file bytes per stored byte of what is live (compression_ratio_milli / 1000)");
  w.Sample("ckptfs_compression_ratio", "", PrometheusWriter::Thousandths(ratio));
  w.Type("ckptfs_read_only", kGauge, "1 when the store is read-only (mounted so, or after a failed commit)");
  w.Sample("ckptfs_read_only", "", store.read_only ? "1" : "0");
  w.Type("ckptfs_channel_info", kGauge, "how requests reach the daemon (channel), as a label");
  w.Sample("ckptfs_channel_info", "channel=\"" + channel.name + "\"", "1");
  w.Type("ckptfs_ring_requests_total", kCounter, "requests served through FUSE over io_uring (ring_requests)");
  w.Sample("ckptfs_ring_requests_total", "", std::to_string(channel.ring_requests));
  w.Type("ckptfs_fuse_requests_total", kCounter, "FUSE requests by operation (fuse_requests)");
  for (int i = 0; i < static_cast<int>(FuseOp::kCount); ++i) {
    w.Sample("ckptfs_fuse_requests_total", std::string("op=\"") + FuseOpName(static_cast<FuseOp>(i)) + "\"",
             std::to_string(fuse.requests[i].load()));
  }
  w.Type("ckptfs_fuse_error_replies_total", kCounter, "replies carrying an errno (fuse_error_replies)");
  w.Sample("ckptfs_fuse_error_replies_total", "", std::to_string(fuse.error_replies.load()));
  w.Type("ckptfs_fuse_write_requests_total", kCounter, "WRITE requests by size (write_request_sizes)");
  for (const Field& f : WriteSizeFields(fuse)) {
    w.Sample("ckptfs_fuse_write_requests_total", std::string("size=\"") + f.first + "\"", std::to_string(f.second));
  }
  if (tier) {
    w.Type("ckptfs_tier_info", kGauge, "the RADOS image the store drains to (tier_target), as a label");
    w.Sample("ckptfs_tier_info", "target=\"" + LabelValue(tier->target) + "\"", "1");
    w.Fields("tier", "tier", TierFields(*tier));
    w.Type("ckptfs_tier_failing", kGauge, "1 while the drain's last cycle failed (tier_last_error is set)");
    w.Sample("ckptfs_tier_failing", "", tier->last_error.empty() ? "0" : "1");
    if (!tier->last_error.empty()) {
      w.Type("ckptfs_tier_last_error_info", kGauge, "the drain's last error (tier_last_error), as a label");
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
