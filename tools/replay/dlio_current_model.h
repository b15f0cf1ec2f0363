// DLIO's current checkpoint arithmetic (dlio_benchmark base_checkpointing.py,
// GQA-aware version), reimplemented: parameter count, per-layer tensors,
// pipeline-stage layer ranges, ZeRO optimizer groups and DeepSpeed-style names.
// Counts are in elements; callers multiply by the dtype size.
#pragma once

#include <cstdint>
#include <vector>

#include "checkpoint_plan.h"
#include "workload_model.h"

namespace ckptfs::replay {

uint64_t DlioParameterCount(const TransformerShape& shape);

// Layer indices run 0..layers+2: 0 is the embedding, 1..layers the
// transformer blocks, layers+1 the lm_head and layers+2 the final norm.
std::vector<uint64_t> DlioLayerElements(const WorkloadSpec& spec, uint64_t layer_index);

struct LayerRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive, as DLIO has it
};
LayerRange DlioLayerRange(const WorkloadSpec& spec, int pipeline_rank);

// Per-rank optimizer tensors: three (params, 5*hidden) pairs, as DLIO models
// fp32 master weights plus Adam's two moments.
std::vector<uint64_t> DlioOptimizerElements(const WorkloadSpec& spec);

// Files rank `rank` writes for checkpoint `id`; empty when it writes none.
RankPlan DlioCurrentRankPlan(const WorkloadSpec& spec, int rank, CheckpointId id);

}  // namespace ckptfs::replay
