// Stats rendering. The JSON is flat objects of integers (and the one
// boolean read_only), written by hand: no dependency, and trivially parsed
// by any client.
#include "stats_report.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace ckptfs {
namespace {

using Field = std::pair<const char*, uint64_t>;

std::vector<Field> StoreFields(const StoreStats& s) {
  return {{"store_id", s.store_id},
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
          {"prefetch_pending", s.prefetch_pending},
          {"commits", s.commits},
          {"log_compactions", s.log_compactions},
          {"cleaner_bytes_moved", s.cleaner_bytes_moved},
          {"cleaner_segments", s.cleaner_segments},
          {"evicted_segments", s.evicted_segments},
          {"evicted_bytes", s.evicted_bytes},
          {"remote_objects", s.remote_objects},
          {"remote_live_bytes", s.remote_live_bytes},
          {"remote_reads", s.remote_reads},
          {"remote_read_bytes", s.remote_read_bytes},
          {"cache_hit_bytes", s.cache_hit_bytes},
          {"cache_fill_bytes", s.cache_fill_bytes},
          {"segment_size", s.segment_size},
          {"segments_total", s.segments_total},
          {"segments_free", s.segments_free},
          {"segments_data", s.segments_data},
          {"segments_meta", s.segments_meta},
          {"segments_pending_free", s.segments_pending_free},
          {"live_bytes", s.live_bytes},
          {"live_file_bytes", s.live_file_bytes},
          {"dead_bytes", s.dead_bytes},
          {"fallocated_bytes", s.fallocated_bytes},
          {"shared_bytes", s.shared_bytes},
          {"bytes_copied", s.bytes_copied},
          {"inodes", s.inodes},
          {"compressed_runs", s.compressed_runs},
          {"compress_raw_runs", s.compress_raw_runs},
          {"compress_bytes_in", s.compress_bytes_in},
          {"compress_bytes_out", s.compress_bytes_out},
          {"compress_pending_bytes", s.compress_pending_bytes},
          {"compress_waits", s.compress_waits},
          {"compress_skipped_runs", s.compress_skipped_runs},
          {"runs_decoded", s.runs_decoded},
          {"backing_shortfall_bytes", s.backing_shortfall_bytes}};
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
  return {{"published", t.published ? 1u : 0u},
          {"committed_lsn", t.committed_lsn},
          {"drained_lsn", t.drained_lsn},
          {"behind_bytes", t.behind_bytes},
          {"behind_ms", t.behind_ms},
          {"uploaded_bytes", t.uploaded_bytes},
          {"adopted_bytes", t.adopted_bytes},
          {"image_bytes", t.image_bytes},
          {"manifests_published", t.manifests_published},
          {"objects_removed", t.objects_removed},
          {"errors", t.errors},
          {"retries", t.retries},
          {"deferred_ms", t.deferred_ms},
          {"sending_ms", t.sending_ms},
          {"held_send_buffers", t.held_send_buffers},
          {"fenced", t.fenced ? 1u : 0u}};
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
