// Integer divisions truncate exactly where DLIO's Python `//` does, so totals
// match DLIO's to the byte rather than to a rounding.
#include "dlio_current_model.h"

#include <string>

namespace ckptfs::replay {
namespace {

struct RankCoordinates {
  int pipeline = 0;
  int tensor = 0;
  int data = 0;
  int model = 0;  // index within the tensor x pipeline group
};

RankCoordinates CoordinatesOf(const ParallelLayout& layout, int rank) {
  RankCoordinates c;
  c.pipeline = (rank / layout.tensor) % layout.pipeline;
  c.tensor = rank % layout.tensor;
  c.data = rank / layout.ModelParallel();
  c.model = rank % layout.ModelParallel();
  return c;
}

uint64_t KvColumns(const TransformerShape& shape) {
  return shape.hidden / shape.attention_heads * shape.kv_heads;
}

std::vector<uint64_t> ToBytes(const std::vector<uint64_t>& elements, DType dtype) {
  std::vector<uint64_t> bytes;
  for (uint64_t count : elements) {
    if (count > 0) bytes.push_back(count * DTypeBytes(dtype));
  }
  return bytes;
}

std::string StepDirectory(CheckpointId id) {
  return "global_epoch" + std::to_string(id.epoch) + "_step" + std::to_string(id.step);
}

}  // namespace

uint64_t DlioParameterCount(const TransformerShape& s) {
  if (s.layers == 0) return 0;
  uint64_t embedding = s.vocab * s.hidden;
  uint64_t per_layer = s.hidden                              // input norm
                       + s.hidden * (s.hidden + 2 * KvColumns(s))  // q, k, v
                       + s.hidden * s.hidden                 // attention output
                       + s.hidden                            // post-attention norm
                       + s.ffn_hidden * 2 * s.hidden         // gated h -> 4h
                       + s.ffn_hidden * s.hidden;            // 4h -> h
  return embedding + per_layer * s.layers + s.hidden /* final norm */ + embedding /* lm_head */;
}

std::vector<uint64_t> DlioLayerElements(const WorkloadSpec& spec, uint64_t layer_index) {
  const TransformerShape& s = spec.shape;
  const uint64_t tp = spec.layout.tensor;
  // ZeRO-3 shards parameters over data-parallel ranks too; ZeRO-1/2 do not.
  const uint64_t shard = spec.layout.zero_stage >= 3 ? spec.layout.data : 1;
  if (layer_index == 0 || layer_index == s.layers + 1) {
    return {s.hidden * s.vocab / tp / shard};
  }
  if (layer_index == s.layers + 2) return {s.hidden / shard};
  return {
      s.hidden / shard,
      s.hidden * (s.hidden + 2 * KvColumns(s)) / tp / shard,
      s.hidden * s.hidden / tp / shard,
      s.hidden / shard,
      s.hidden * 2 * s.ffn_hidden / tp / shard,
      s.hidden * s.ffn_hidden / tp / shard,
  };
}

LayerRange DlioLayerRange(const WorkloadSpec& spec, int pipeline_rank) {
  const uint64_t layers = spec.shape.layers;
  const uint64_t pp = spec.layout.pipeline;
  const uint64_t per_stage = layers / pp;
  const uint64_t remainder = layers % pp;
  const uint64_t stage = pipeline_rank;
  LayerRange range;
  if (stage < remainder) {
    range.first = stage * (per_stage + 1) + 1;
    range.last = range.first + per_stage;
  } else {
    range.first = remainder * (per_stage + 1) + (stage - remainder) * per_stage + 1;
    range.last = range.first + per_stage - 1;
  }
  // The embedding goes to the first stage, lm_head and final norm to the last.
  if (stage == pp - 1) range.last = layers + 2;
  if (stage == 0) range.first = 0;
  return range;
}

std::vector<uint64_t> DlioOptimizerElements(const WorkloadSpec& spec) {
  const ParallelLayout& layout = spec.layout;
  uint64_t sharers = layout.zero_stage > 0 ? uint64_t(layout.data) * layout.ModelParallel()
                                           : uint64_t(layout.ModelParallel());
  uint64_t params = DlioParameterCount(spec.shape) / sharers;
  if (params == 0) return {};
  uint64_t norms = spec.shape.hidden * 5;
  return {params, norms, params, norms, params, norms};
}

RankPlan DlioCurrentRankPlan(const WorkloadSpec& spec, int rank, CheckpointId id) {
  const ParallelLayout& layout = spec.layout;
  const RankCoordinates at = CoordinatesOf(layout, rank);
  const std::string dir = StepDirectory(id) + "/";
  const std::string mp = std::to_string(at.model);
  const std::string dp = std::to_string(at.data);
  RankPlan plan;
  plan.rank = rank;
  // Without ZeRO only the first model-parallel group holds distinct state.
  if (layout.zero_stage == 0 && rank >= layout.ModelParallel()) return plan;

  const LayerRange range = DlioLayerRange(spec, at.pipeline);
  auto layer_bytes = [&](uint64_t layer) {
    return ToBytes(DlioLayerElements(spec, layer), spec.model_dtype);
  };
  if (layout.zero_stage == 1 || layout.zero_stage == 2) {
    // Parameters are replicated over data parallelism: data rank 0 saves them.
    if (at.data == 0) {
      if (layout.pipeline > 1) {
        for (uint64_t layer = range.first; layer <= range.last; ++layer) {
          plan.files.push_back({dir + "layer_" + std::to_string(layer) + "-model_" + mp +
                                    "_model_states.pt",
                                layer_bytes(layer)});
        }
      } else {
        PlannedFile all{dir + "model_" + mp + "_model_states.pt", {}};
        for (uint64_t layer = range.first; layer <= range.last; ++layer) {
          for (uint64_t bytes : layer_bytes(layer)) all.tensor_bytes.push_back(bytes);
        }
        plan.files.push_back(std::move(all));
      }
    }
  } else {
    PlannedFile all{dir + "zero_pp_rank_" + dp + "_mp_rank_" + mp + "_model_states.pt", {}};
    for (uint64_t layer = range.first; layer <= range.last; ++layer) {
      for (uint64_t bytes : layer_bytes(layer)) all.tensor_bytes.push_back(bytes);
    }
    plan.files.push_back(std::move(all));
  }
  std::vector<uint64_t> optimizer = ToBytes(DlioOptimizerElements(spec), spec.optimizer_dtype);
  if (!optimizer.empty()) {
    plan.files.push_back(
        {dir + "zero_pp_rank_" + dp + "_mp_rank_" + mp + "_optim_states.pt", optimizer});
  }
  return plan;
}

}  // namespace ckptfs::replay
