// WorkloadSpec and presets: the model shape, parallel layout and I/O behaviour
// of a checkpoint burst, and BuildCheckpointPlan() turning one into files.
//
// Two sizing rules exist because DLIO changed them: kDlioCurrent derives every
// tensor from the transformer shape (grouped-query attention included);
// kDlioV2Handset replays DLIO v2.0.0, whose configs listed tensor sizes by hand.
// docs/workload.md derives the numbers. kSmallFiles is not a model but a
// stress shape: many shard files of a few hundred KiB each (small_files_model.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint_plan.h"
#include "ckptfs/status.h"
#include "payload.h"
#include "rank_range.h"

namespace ckptfs::replay {

enum class SizingRule { kDlioCurrent, kDlioV2Handset, kSmallFiles };

enum class DType { kInt8, kFp16, kBf16, kFp32, kFp64 };
uint64_t DTypeBytes(DType dtype);
std::string_view DTypeName(DType dtype);
Result<DType> ParseDType(std::string_view name);

struct TransformerShape {
  uint64_t layers = 0;
  uint64_t hidden = 0;
  uint64_t ffn_hidden = 0;
  uint64_t attention_heads = 0;
  uint64_t kv_heads = 0;
  uint64_t vocab = 0;
};

struct ParallelLayout {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int zero_stage = 1;

  int ModelParallel() const { return tensor * pipeline; }
  int WorldSize() const { return tensor * pipeline * data; }
};

// DLIO v2.0.0's hand-set sizes, all in bytes of int8 tensors.
struct HandsetSizes {
  uint64_t model_size = 0;
  std::vector<uint64_t> optimization_groups;
  std::vector<uint64_t> layer_parameters;
};

// The small-files burst: `files` files (at scale 1) whose sizes are spread
// log-uniformly over [min_bytes, max_bytes], dealt round-robin to the ranks.
struct SmallFilesSizes {
  uint64_t files = 20000;
  uint64_t min_bytes = 64ull << 10;
  uint64_t max_bytes = 4ull << 20;
};

struct WorkloadSpec {
  std::string name;
  SizingRule rule = SizingRule::kDlioCurrent;
  TransformerShape shape;
  ParallelLayout layout;
  DType model_dtype = DType::kFp16;
  DType optimizer_dtype = DType::kFp32;
  HandsetSizes handset;  // only for kDlioV2Handset
  SmallFilesSizes small_files;  // only for kSmallFiles
  // Multiplies every tensor (not the file count): 0.001 writes a thousandth.
  // For kSmallFiles it multiplies the file count instead and keeps the sizes,
  // since small files are the point of that workload.
  double scale = 1.0;
  PayloadKind payload = PayloadKind::kRandom;
  bool fsync = true;
};

// Identifies one checkpoint the way DLIO names it: global_epoch{e}_step{s}.
struct CheckpointId {
  int epoch = 1;
  int step = 1;
};

// The checkpoints a run writes: pass p is epoch p+1, and steps count up across
// passes, so names never repeat and retention has an order to delete in.
std::vector<CheckpointId> CheckpointSchedule(int checkpoints_per_pass, int passes);

std::vector<std::string> PresetNames();
Result<WorkloadSpec> FindPreset(std::string_view name);

// Rejects shapes and layouts the formulas cannot use (zero sizes, heads that do
// not divide hidden, ZeRO-3 with pipeline parallelism, ...).
Status ValidateSpec(const WorkloadSpec& spec);

// Every rank's files, or only those of `ranks` (Invalid when a rank is not in
// the layout). A rank's files do not depend on which other ranks are planned.
Result<CheckpointPlan> BuildCheckpointPlan(const WorkloadSpec& spec, CheckpointId id);
Result<CheckpointPlan> BuildCheckpointPlan(const WorkloadSpec& spec, CheckpointId id, RankRange ranks);

}  // namespace ckptfs::replay
