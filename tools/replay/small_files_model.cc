// A file is one torch.save'd tensor, sized so that the whole file (framing
// included) has the drawn size: "64 KiB-4 MiB files" means file sizes, as
// ls shows them. Files are dealt round-robin, so rank r writes r, r+R, ...
#include "small_files_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "torch_save_layout.h"

namespace ckptfs::replay {
namespace {

uint64_t Mix(uint64_t z) {  // splitmix64
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t SmallFileFramingBytes() { return TorchSaveLayout({1}).FileBytes() - 1; }

uint64_t SmallFilesCount(const WorkloadSpec& spec) {
  const uint64_t total = spec.small_files.files;
  const uint64_t ranks = static_cast<uint64_t>(spec.layout.WorldSize());
  const auto scaled = static_cast<uint64_t>(std::llround(static_cast<double>(total) * spec.scale));
  return std::min(total, std::max(ranks, scaled));
}

uint64_t SmallFileBytes(const SmallFilesSizes& sizes, uint64_t index) {
  // 53 random bits as a fraction in [0, 1).
  const double u = static_cast<double>(Mix(index) >> 11) * 0x1.0p-53;
  const double ratio = static_cast<double>(sizes.max_bytes) / static_cast<double>(sizes.min_bytes);
  const auto bytes = static_cast<uint64_t>(std::llround(static_cast<double>(sizes.min_bytes) * std::pow(ratio, u)));
  return std::clamp(bytes, sizes.min_bytes, sizes.max_bytes);
}

RankPlan SmallFilesRankPlan(const WorkloadSpec& spec, int rank, CheckpointId id) {
  RankPlan plan;
  plan.rank = rank;
  const std::string directory = "global_epoch" + std::to_string(id.epoch) + "_step" + std::to_string(id.step);
  const uint64_t framing = SmallFileFramingBytes();
  const uint64_t count = SmallFilesCount(spec);
  const uint64_t ranks = static_cast<uint64_t>(spec.layout.WorldSize());
  for (uint64_t index = static_cast<uint64_t>(rank); index < count; index += ranks) {
    char name[32];
    std::snprintf(name, sizeof name, "/shard_%05llu.pt", static_cast<unsigned long long>(index));
    plan.files.push_back({directory + name, {SmallFileBytes(spec.small_files, index) - framing}});
  }
  return plan;
}

}  // namespace ckptfs::replay
