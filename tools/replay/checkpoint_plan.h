// CheckpointPlan: what one checkpoint writes, rank by rank and file by file.
//
// A plan is pure data, built by the workload model and consumed by the
// burst runner, the trace emitter and --plan output. Each file lists its
// tensors in the order torch.save would write their storages, so the runner
// can issue one write per tensor as a real trainer does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ckptfs::replay {

struct PlannedFile {
  // Relative to the run directory, e.g. "global_epoch1_step1/layer_0-model_0_model_states.pt".
  std::string relative_path;
  std::vector<uint64_t> tensor_bytes;

  uint64_t TensorBytes() const;
  // On-disk size: tensors plus the zip framing torch.save adds.
  uint64_t FileBytes() const;
};

struct RankPlan {
  int rank = 0;
  std::vector<PlannedFile> files;

  uint64_t TensorBytes() const;
  uint64_t FileBytes() const;
};

struct CheckpointPlan {
  // Sub-directory the checkpoint's files live in ("" when they sit in the run
  // directory itself, as in DLIO v2.0); deleting a checkpoint removes its files
  // and then this directory.
  std::string directory;
  std::vector<RankPlan> ranks;

  uint64_t TensorBytes() const;
  uint64_t FileBytes() const;
  size_t FileCount() const;
};

}  // namespace ckptfs::replay
