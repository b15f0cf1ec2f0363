// Totals over a CheckpointPlan; file sizes come from the torch.save layout.
#include "checkpoint_plan.h"

#include "torch_save_layout.h"

namespace ckptfs::replay {

uint64_t PlannedFile::TensorBytes() const {
  uint64_t total = 0;
  for (uint64_t bytes : tensor_bytes) total += bytes;
  return total;
}

uint64_t PlannedFile::FileBytes() const { return TorchSaveLayout(tensor_bytes).FileBytes(); }

uint64_t RankPlan::TensorBytes() const {
  uint64_t total = 0;
  for (const PlannedFile& file : files) total += file.TensorBytes();
  return total;
}

uint64_t RankPlan::FileBytes() const {
  uint64_t total = 0;
  for (const PlannedFile& file : files) total += file.FileBytes();
  return total;
}

uint64_t CheckpointPlan::TensorBytes() const {
  uint64_t total = 0;
  for (const RankPlan& rank : ranks) total += rank.TensorBytes();
  return total;
}

uint64_t CheckpointPlan::FileBytes() const {
  uint64_t total = 0;
  for (const RankPlan& rank : ranks) total += rank.FileBytes();
  return total;
}

size_t CheckpointPlan::FileCount() const {
  size_t count = 0;
  for (const RankPlan& rank : ranks) count += rank.files.size();
  return count;
}

}  // namespace ckptfs::replay
