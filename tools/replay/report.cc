// Rank spread uses each rank's own duration, so a straggler shows as a large
// max next to the min even when the checkpoint total hides it.
#include "report.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "dlio_current_model.h"
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

// Keys stay in the order they are set: the documents are read by people too.
using Json = nlohmann::ordered_json;

// Indented, with a final newline; NaN and infinity become null.
std::string Dump(const Json& json) { return json.dump(2) + "\n"; }

Json SpecJson(const WorkloadSpec& spec) {
  Json json = {{"name", spec.name}, {"sizing", RuleName(spec.rule)}};
  if (spec.rule == SizingRule::kSmallFiles) {
    json["files"] = SmallFilesCount(spec);
    json["min_file_bytes"] = spec.small_files.min_bytes;
    json["max_file_bytes"] = spec.small_files.max_bytes;
    json["ranks"] = spec.layout.WorldSize();
  } else {
    json["layers"] = spec.shape.layers;
    if (spec.rule == SizingRule::kDlioCurrent) {
      json["hidden"] = spec.shape.hidden;
      json["ffn_hidden"] = spec.shape.ffn_hidden;
      json["attention_heads"] = spec.shape.attention_heads;
      json["kv_heads"] = spec.shape.kv_heads;
      json["vocab"] = spec.shape.vocab;
      json["parameters"] = DlioParameterCount(spec.shape);
    }
    json["tp"] = spec.layout.tensor;
    json["pp"] = spec.layout.pipeline;
    json["dp"] = spec.layout.data;
    json["ranks"] = spec.layout.WorldSize();
    json["zero_stage"] = spec.layout.zero_stage;
    json["model_dtype"] = DTypeName(spec.model_dtype);
    json["optimizer_dtype"] = DTypeName(spec.optimizer_dtype);
  }
  json["scale"] = spec.scale;
  json["payload"] = PayloadKindName(spec.payload);
  json["fsync"] = spec.fsync;
  return json;
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

// [first, last], both included.
Json RankRangeJson(RankRange ranks) { return Json::array({ranks.first, ranks.last}); }

}  // namespace

std::string FormatPlanText(const WorkloadSpec& spec, RankRange ranks, const CheckpointPlan& plan) {
  std::string out = SpecLine(spec);
  for (const RankPlan& rank : plan.ranks) {
    out += Printf("rank %d: %zu files, %s\n", rank.rank, rank.files.size(), Sizes(rank.FileBytes()).c_str());
    for (const PlannedFile& file : rank.files) {
      out += Printf("  %-64s %16llu B  %3zu tensors\n", file.relative_path.c_str(),
                    (unsigned long long)file.FileBytes(), file.tensor_bytes.size());
    }
  }
  out += Printf("total: %zu files on %zu ranks", plan.FileCount(), plan.ranks.size());
  const int world = spec.layout.WorldSize();
  if (ranks != AllRanks(world)) out += Printf(" (ranks %s of %d)", FormatRankRange(ranks).c_str(), world);
  out += "\n";
  out += "  tensor bytes (DLIO's size): " + Sizes(plan.TensorBytes()) + "\n";
  out += "  file bytes (with torch.save framing): " + Sizes(plan.FileBytes()) + "\n";
  return out;
}

std::string FormatPlanJson(const WorkloadSpec& spec, RankRange ranks_run, const CheckpointPlan& plan) {
  Json ranks = Json::array();
  for (const RankPlan& rank : plan.ranks) {
    Json files = Json::array();
    for (const PlannedFile& file : rank.files) {
      files.push_back({{"path", file.relative_path}, {"file_bytes", file.FileBytes()}, {"tensor_bytes", file.tensor_bytes}});
    }
    ranks.push_back({{"rank", rank.rank},
                     {"file_bytes", rank.FileBytes()},
                     {"tensor_bytes", rank.TensorBytes()},
                     {"files", std::move(files)}});
  }
  Json json = {{"workload", SpecJson(spec)},
               {"rank_range", RankRangeJson(ranks_run)},
               {"directory", plan.directory},
               {"ranks", std::move(ranks)}};
  json["totals"] = {{"files", plan.FileCount()},
                    {"tensor_bytes", plan.TensorBytes()},
                    {"file_bytes", plan.FileBytes()},
                    {"tensor_gb", plan.TensorBytes() / kGB},
                    {"tensor_gib", plan.TensorBytes() / kGiB}};
  return Dump(json);
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

std::string FormatPhasesJson(const WorkloadSpec* spec, std::optional<RankRange> ranks_run,
                             const std::vector<PhaseResult>& phases) {
  Json json = Json::object();
  if (spec != nullptr) json["workload"] = SpecJson(*spec);
  if (ranks_run) json["rank_range"] = RankRangeJson(*ranks_run);
  Json out = Json::array();
  for (const PhaseResult& phase : phases) {
    Json ranks = Json::array();
    for (const RankResult& rank : phase.ranks) {
      ranks.push_back({{"rank", rank.rank}, {"files", rank.files}, {"bytes", rank.bytes}, {"seconds", rank.seconds}});
    }
    out.push_back({{"kind", phase.kind},
                   {"label", phase.label},
                   {"files", phase.files},
                   {"bytes", phase.bytes},
                   {"seconds", phase.seconds},
                   {"gb_per_s", phase.BytesPerSecond() / kGB},
                   {"gib_per_s", phase.BytesPerSecond() / kGiB},
                   {"ranks", std::move(ranks)},
                   {"notes", phase.notes}});
  }
  json["phases"] = std::move(out);
  return Dump(json);
}

}  // namespace ckptfs::replay
