// Presets and the dispatch from a WorkloadSpec to a CheckpointPlan. Preset
// values come from DLIO's workload configs; see docs/workload.md for sources.
#include "workload_model.h"

#include <cmath>

#include "dlio_current_model.h"
#include "dlio_v2_model.h"
#include "small_files_model.h"

namespace ckptfs::replay {
namespace {

constexpr TransformerShape kLlama3_8B{32, 4096, 14336, 32, 8, 128256};
// DLIO's llama_70b config gives 128 attention heads (Meta's model has 64);
// we follow DLIO so the sizes match MLPerf Storage's.
constexpr TransformerShape kLlama3_70B{80, 8192, 28672, 128, 8, 128256};
constexpr TransformerShape kLlama3_405B{126, 16384, 53248, 128, 8, 128256};

WorkloadSpec CurrentPreset(std::string name, TransformerShape shape, ParallelLayout layout) {
  WorkloadSpec spec;
  spec.name = std::move(name);
  spec.rule = SizingRule::kDlioCurrent;
  spec.shape = shape;
  spec.layout = layout;
  return spec;
}

WorkloadSpec DlioV2Preset() {
  WorkloadSpec spec;
  spec.name = "llama3-405b-dlio-v2.0";
  spec.rule = SizingRule::kDlioV2Handset;
  spec.shape.layers = 80;
  spec.layout = {4, 2, 1, 1};
  spec.model_dtype = DType::kInt8;
  spec.optimizer_dtype = DType::kInt8;
  spec.handset.model_size = 16384;
  spec.handset.optimization_groups = {1009254400, 865075200, 793600};
  spec.handset.layer_parameters = {4358152160, 704347824};
  // DLIO v2.0.0 saved torch.randint(high=1) tensors (all zero) and never fsynced.
  spec.payload = PayloadKind::kZeros;
  spec.fsync = false;
  return spec;
}

// 20,000 files of 64 KiB-4 MiB (about 21 GB) from 8 writers, fsync per file.
// The layout fields only count writers here: --dp 16 gives 16.
WorkloadSpec SmallFilesPreset() {
  WorkloadSpec spec;
  spec.name = "small-files";
  spec.rule = SizingRule::kSmallFiles;
  spec.layout = {1, 1, 8, 0};
  return spec;
}

std::vector<WorkloadSpec> AllPresets() {
  return {
      CurrentPreset("llama3-405b", kLlama3_405B, {4, 2, 1, 1}),
      DlioV2Preset(),
      // MLPerf Storage v2.0's closed layouts, for cross-checking sizes.
      CurrentPreset("llama3-405b-mlperf", kLlama3_405B, {8, 32, 2, 1}),
      CurrentPreset("llama3-70b", kLlama3_70B, {8, 1, 1, 3}),
      CurrentPreset("llama3-8b", kLlama3_8B, {1, 1, 8, 3}),
      SmallFilesPreset(),
  };
}

uint64_t ScaledBytes(uint64_t bytes, double scale) {
  if (scale == 1.0) return bytes;
  long long scaled = std::llround(static_cast<double>(bytes) * scale);
  return scaled < 1 ? 1 : static_cast<uint64_t>(scaled);
}

}  // namespace

uint64_t DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return 1;
    case DType::kFp16:
    case DType::kBf16: return 2;
    case DType::kFp32: return 4;
    case DType::kFp64: return 8;
  }
  return 1;
}

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return "int8";
    case DType::kFp16: return "fp16";
    case DType::kBf16: return "bf16";
    case DType::kFp32: return "fp32";
    case DType::kFp64: return "fp64";
  }
  return "int8";
}

Result<DType> ParseDType(std::string_view name) {
  for (DType dtype : {DType::kInt8, DType::kFp16, DType::kBf16, DType::kFp32, DType::kFp64}) {
    if (name == DTypeName(dtype)) return dtype;
  }
  return Status::Invalid("unknown dtype '" + std::string(name) +
                         "' (int8, fp16, bf16, fp32, fp64)");
}

std::vector<CheckpointId> CheckpointSchedule(int checkpoints_per_pass, int passes) {
  std::vector<CheckpointId> ids;
  int step = 0;
  for (int pass = 0; pass < passes; ++pass) {
    for (int i = 0; i < checkpoints_per_pass; ++i) ids.push_back({pass + 1, ++step});
  }
  return ids;
}

std::vector<std::string> PresetNames() {
  std::vector<std::string> names;
  for (const WorkloadSpec& spec : AllPresets()) names.push_back(spec.name);
  return names;
}

Result<WorkloadSpec> FindPreset(std::string_view name) {
  for (WorkloadSpec& spec : AllPresets()) {
    if (spec.name == name) return std::move(spec);
  }
  std::string known;
  for (const std::string& n : PresetNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::NotFound("no workload preset '" + std::string(name) + "' (known: " + known + ")");
}

Status ValidateSpec(const WorkloadSpec& spec) {
  const ParallelLayout& l = spec.layout;
  if (l.tensor < 1 || l.pipeline < 1 || l.data < 1) {
    return Status::Invalid("tp, pp and dp must be >= 1");
  }
  if (l.WorldSize() > 4096) return Status::Invalid("more than 4096 ranks (one thread each)");
  if (l.zero_stage < 0 || l.zero_stage > 3) return Status::Invalid("ZeRO stage must be 0..3");
  if (!(spec.scale > 0) || spec.scale > 1) return Status::Invalid("scale must be in (0, 1]");
  const TransformerShape& s = spec.shape;
  if (spec.rule == SizingRule::kSmallFiles) {
    const SmallFilesSizes& f = spec.small_files;
    if (f.files == 0) return Status::Invalid("small-files needs at least one file");
    if (f.min_bytes <= SmallFileFramingBytes() || f.max_bytes < f.min_bytes) {
      return Status::Invalid("small-files sizes must satisfy framing < min <= max");
    }
    return Status::Ok();
  }
  if (spec.rule == SizingRule::kDlioV2Handset) {
    if (s.layers == 0) return Status::Invalid("layers must be >= 1");
    return Status::Ok();
  }
  if (s.layers == 0 || s.hidden == 0 || s.ffn_hidden == 0 || s.vocab == 0) {
    return Status::Invalid("layers, hidden, ffn and vocab must be >= 1");
  }
  if (s.attention_heads == 0 || s.hidden % s.attention_heads != 0) {
    return Status::Invalid("attention heads must divide hidden");
  }
  if (s.kv_heads == 0 || s.kv_heads > s.attention_heads) {
    return Status::Invalid("kv heads must be in 1..heads");
  }
  if (static_cast<uint64_t>(l.pipeline) > s.layers) {
    return Status::Invalid("more pipeline stages than layers");
  }
  if (l.zero_stage == 3 && l.pipeline > 1) {
    return Status::Invalid("ZeRO-3 with pipeline parallelism is not modelled (DLIO asserts pp == 1)");
  }
  return Status::Ok();
}

Result<CheckpointPlan> BuildCheckpointPlan(const WorkloadSpec& spec, CheckpointId id) {
  CKPTFS_RETURN_IF_ERROR(ValidateSpec(spec));
  return BuildCheckpointPlan(spec, id, AllRanks(spec.layout.WorldSize()));
}

Result<CheckpointPlan> BuildCheckpointPlan(const WorkloadSpec& spec, CheckpointId id, RankRange ranks) {
  CKPTFS_RETURN_IF_ERROR(ValidateSpec(spec));
  CKPTFS_RETURN_IF_ERROR(CheckRankRange(ranks, spec.layout.WorldSize()));
  CheckpointPlan plan;
  if (spec.rule == SizingRule::kDlioCurrent) {
    plan.directory = "global_epoch" + std::to_string(id.epoch) + "_step" + std::to_string(id.step);
  }
  if (spec.rule == SizingRule::kSmallFiles) {
    plan.directory = "global_epoch" + std::to_string(id.epoch) + "_step" + std::to_string(id.step);
    // The scale already chose how many files; their sizes stay as drawn.
    for (int rank = ranks.first; rank <= ranks.last; ++rank) plan.ranks.push_back(SmallFilesRankPlan(spec, rank, id));
    return plan;
  }
  for (int rank = ranks.first; rank <= ranks.last; ++rank) {
    RankPlan rank_plan = spec.rule == SizingRule::kDlioCurrent ? DlioCurrentRankPlan(spec, rank, id)
                                                               : DlioV2RankPlan(spec, rank, id);
    for (PlannedFile& file : rank_plan.files) {
      for (uint64_t& bytes : file.tensor_bytes) bytes = ScaledBytes(bytes, spec.scale);
    }
    plan.ranks.push_back(std::move(rank_plan));
  }
  return plan;
}

}  // namespace ckptfs::replay
