// DLIO v2.0.0's checkpoint arithmetic (the release behind the published
// 405B run): sizes come from the config by hand, not from the model shape.
// Every rank saves a model file and an optimizer file; ranks that start a
// pipeline stage also save num_layers (+ tp when tp > 1) layer files.
#pragma once

#include "checkpoint_plan.h"
#include "workload_model.h"

namespace ckptfs::replay {

RankPlan DlioV2RankPlan(const WorkloadSpec& spec, int rank, CheckpointId id);

// How many layer files a layer-saving rank writes.
uint64_t DlioV2LayerFileCount(const WorkloadSpec& spec);

}  // namespace ckptfs::replay
