// In v2.0.0 each optimizer group is saved twice (keys 'a' and 'b') plus one
// "combined" tensor of their sum, and each layer file carries every entry of
// layer_parameters at full size (no division by tensor parallelism).
#include "dlio_v2_model.h"

#include <string>

namespace ckptfs::replay {

uint64_t DlioV2LayerFileCount(const WorkloadSpec& spec) {
  uint64_t layers = spec.shape.layers;
  if (spec.layout.tensor > 1) layers += spec.layout.tensor;
  return layers;
}

RankPlan DlioV2RankPlan(const WorkloadSpec& spec, int rank, CheckpointId id) {
  const HandsetSizes& sizes = spec.handset;
  // Built with append, not "-" + ...: GCC 12 raises a false -Wrestrict on the latter.
  std::string suffix;
  for (int part : {id.epoch, id.step, rank}) suffix.append("-").append(std::to_string(part));
  RankPlan plan;
  plan.rank = rank;
  if (sizes.model_size > 0) {
    plan.files.push_back({"model" + suffix + ".pt", {sizes.model_size}});
  }
  if (!sizes.optimization_groups.empty()) {
    PlannedFile optimizer{"optimizer" + suffix + ".pt", {}};
    uint64_t combined = 0;
    for (uint64_t group : sizes.optimization_groups) {
      if (group == 0) continue;
      optimizer.tensor_bytes.push_back(group);
      optimizer.tensor_bytes.push_back(group);
      combined += group;
    }
    optimizer.tensor_bytes.push_back(combined);
    plan.files.push_back(std::move(optimizer));
  }
  if (rank % spec.layout.pipeline == 0 && !sizes.layer_parameters.empty()) {
    std::vector<uint64_t> layer_tensors;
    for (uint64_t bytes : sizes.layer_parameters) {
      if (bytes > 0) layer_tensors.push_back(bytes);
    }
    for (uint64_t layer = 0; layer < DlioV2LayerFileCount(spec); ++layer) {
      plan.files.push_back({"layer-" + std::to_string(layer) + suffix + ".pt", layer_tensors});
    }
  }
  return plan;
}

}  // namespace ckptfs::replay
