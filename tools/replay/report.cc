// Rank spread uses each rank's own duration, so a straggler shows as a large
// max next to the min even when the checkpoint total hides it.
#include "report.h"

#include <algorithm>
#include <cstdio>

#include "dlio_current_model.h"
#include "json_writer.h"
#include "small_files_model.h"

namespace ckptfs::replay {
namespace {

constexpr double kGB = 1e9;
constexpr double kGiB = 1073741824.0;

std::string Printf(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

std::string_view RuleName(SizingRule rule) {
  switch (rule) {
    case SizingRule::kDlioCurrent: return "dlio-current";
    case SizingRule::kDlioV2Handset: return "dlio-v2.0-handset";
    case SizingRule::kSmallFiles: return "small-files";
  }
  return "dlio-current";
}

void SpecToJson(JsonWriter& json, const WorkloadSpec& spec) {
  json.Key("workload").BeginObject();
  json.Field("name", spec.name).Field("sizing", RuleName(spec.rule));
  if (spec.rule == SizingRule::kSmallFiles) {
    json.Field("files", SmallFilesCount(spec)).Field("min_file_bytes", spec.small_files.min_bytes);
    json.Field("max_file_bytes", spec.small_files.max_bytes).Field("ranks", spec.layout.WorldSize());
    json.Field("scale", spec.scale).Field("payload", PayloadKindName(spec.payload)).Field("fsync", spec.fsync);
    json.EndObject();
    return;
  }
  json.Field("layers", spec.shape.layers);
  if (spec.rule == SizingRule::kDlioCurrent) {
    json.Field("hidden", spec.shape.hidden).Field("ffn_hidden", spec.shape.ffn_hidden);
    json.Field("attention_heads", spec.shape.attention_heads).Field("kv_heads", spec.shape.kv_heads);
    json.Field("vocab", spec.shape.vocab).Field("parameters", DlioParameterCount(spec.shape));
  }
  json.Field("tp", spec.layout.tensor).Field("pp", spec.layout.pipeline).Field("dp", spec.layout.data);
  json.Field("ranks", spec.layout.WorldSize()).Field("zero_stage", spec.layout.zero_stage);
  json.Field("model_dtype", DTypeName(spec.model_dtype)).Field("optimizer_dtype", DTypeName(spec.optimizer_dtype));
  json.Field("scale", spec.scale).Field("payload", PayloadKindName(spec.payload)).Field("fsync", spec.fsync);
  json.EndObject();
}

std::string SpecLine(const WorkloadSpec& spec) {
  std::string line = "workload " + spec.name + " (" + std::string(RuleName(spec.rule)) + "): ";
  if (spec.rule == SizingRule::kSmallFiles) {
    return line + Printf("%llu files of %llu-%llu bytes (log-uniform) from %d writers, scale %g, payload %s, fsync %s\n",
                         (unsigned long long)SmallFilesCount(spec), (unsigned long long)spec.small_files.min_bytes,
                         (unsigned long long)spec.small_files.max_bytes, spec.layout.WorldSize(), spec.scale,
                         std::string(PayloadKindName(spec.payload)).c_str(), spec.fsync ? "on" : "off");
  }
  if (spec.rule == SizingRule::kDlioCurrent) {
    line += Printf("%llu layers, hidden %llu, ffn %llu, %llu heads / %llu kv, vocab %llu, %.4g params; ",
                   (unsigned long long)spec.shape.layers, (unsigned long long)spec.shape.hidden,
                   (unsigned long long)spec.shape.ffn_hidden, (unsigned long long)spec.shape.attention_heads,
                   (unsigned long long)spec.shape.kv_heads, (unsigned long long)spec.shape.vocab,
                   (double)DlioParameterCount(spec.shape));
  } else {
    line += Printf("%llu layers (hand-set sizes); ", (unsigned long long)spec.shape.layers);
  }
  line += Printf("TP%d x PP%d x DP%d = %d ranks, ZeRO-%d, %s model / %s optimizer, scale %g, payload %s, fsync %s\n",
                 spec.layout.tensor, spec.layout.pipeline, spec.layout.data, spec.layout.WorldSize(),
                 spec.layout.zero_stage, std::string(DTypeName(spec.model_dtype)).c_str(),
                 std::string(DTypeName(spec.optimizer_dtype)).c_str(), spec.scale,
                 std::string(PayloadKindName(spec.payload)).c_str(), spec.fsync ? "on" : "off");
  return line;
}

std::string Sizes(uint64_t bytes) {
  return Printf("%llu B = %.3f GB = %.3f GiB", (unsigned long long)bytes, bytes / kGB, bytes / kGiB);
}

}  // namespace

std::string FormatPlanText(const WorkloadSpec& spec, const CheckpointPlan& plan) {
  std::string out = SpecLine(spec);
  for (const RankPlan& rank : plan.ranks) {
    out += Printf("rank %d: %zu files, %s\n", rank.rank, rank.files.size(), Sizes(rank.FileBytes()).c_str());
    for (const PlannedFile& file : rank.files) {
      out += Printf("  %-64s %16llu B  %3zu tensors\n", file.relative_path.c_str(),
                    (unsigned long long)file.FileBytes(), file.tensor_bytes.size());
    }
  }
  out += Printf("total: %zu files on %zu ranks\n", plan.FileCount(), plan.ranks.size());
  out += "  tensor bytes (DLIO's size): " + Sizes(plan.TensorBytes()) + "\n";
  out += "  file bytes (with torch.save framing): " + Sizes(plan.FileBytes()) + "\n";
  return out;
}

std::string FormatPlanJson(const WorkloadSpec& spec, const CheckpointPlan& plan) {
  JsonWriter json;
  json.BeginObject();
  SpecToJson(json, spec);
  json.Field("directory", plan.directory);
  json.Key("ranks").BeginArray();
  for (const RankPlan& rank : plan.ranks) {
    json.BeginObject().Field("rank", rank.rank).Field("file_bytes", rank.FileBytes());
    json.Field("tensor_bytes", rank.TensorBytes());
    json.Key("files").BeginArray();
    for (const PlannedFile& file : rank.files) {
      json.BeginObject().Field("path", file.relative_path).Field("file_bytes", file.FileBytes());
      json.Key("tensor_bytes").BeginArray();
      for (uint64_t bytes : file.tensor_bytes) json.Uint(bytes);
      json.EndArray().EndObject();
    }
    json.EndArray().EndObject();
  }
  json.EndArray();
  json.Key("totals").BeginObject();
  json.Field("files", static_cast<uint64_t>(plan.FileCount()));
  json.Field("tensor_bytes", plan.TensorBytes()).Field("file_bytes", plan.FileBytes());
  json.Field("tensor_gb", plan.TensorBytes() / kGB).Field("tensor_gib", plan.TensorBytes() / kGiB);
  json.EndObject();
  json.EndObject();
  return json.text() + "\n";
}

std::string FormatPhaseTable(const std::vector<PhaseResult>& phases) {
  std::string out = Printf("%-8s %-20s %7s %12s %12s %9s %9s %9s %9s %9s\n", "phase", "checkpoint", "files",
                           "GB", "GiB", "seconds", "GB/s", "GiB/s", "rank min", "rank max");
  for (const PhaseResult& phase : phases) {
    double min_s = 0, max_s = 0;
    if (!phase.ranks.empty()) {
      auto [lo, hi] = std::minmax_element(phase.ranks.begin(), phase.ranks.end(),
                                          [](const RankResult& a, const RankResult& b) { return a.seconds < b.seconds; });
      min_s = lo->seconds;
      max_s = hi->seconds;
    }
    out += Printf("%-8s %-20s %7llu %12.3f %12.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", phase.kind.c_str(),
                  phase.label.c_str(), (unsigned long long)phase.files, phase.bytes / kGB, phase.bytes / kGiB,
                  phase.seconds, phase.BytesPerSecond() / kGB, phase.BytesPerSecond() / kGiB, min_s, max_s);
    for (const std::string& note : phase.notes) out += "         note: " + note + "\n";
  }
  return out;
}

std::string FormatPhasesJson(const WorkloadSpec* spec, const std::vector<PhaseResult>& phases) {
  JsonWriter json;
  json.BeginObject();
  if (spec != nullptr) SpecToJson(json, *spec);
  json.Key("phases").BeginArray();
  for (const PhaseResult& phase : phases) {
    json.BeginObject().Field("kind", phase.kind).Field("label", phase.label);
    json.Field("files", phase.files).Field("bytes", phase.bytes).Field("seconds", phase.seconds);
    json.Field("gb_per_s", phase.BytesPerSecond() / kGB).Field("gib_per_s", phase.BytesPerSecond() / kGiB);
    json.Key("ranks").BeginArray();
    for (const RankResult& rank : phase.ranks) {
      json.BeginObject().Field("rank", rank.rank).Field("files", rank.files).Field("bytes", rank.bytes);
      json.Field("seconds", rank.seconds).EndObject();
    }
    json.EndArray();
    json.Key("notes").BeginArray();
    for (const std::string& note : phase.notes) json.String(note);
    json.EndArray().EndObject();
  }
  json.EndArray().EndObject();
  return json.text() + "\n";
}

}  // namespace ckptfs::replay
