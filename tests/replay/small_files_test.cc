// The small-files workload: 20,000 files of 64 KiB-4 MiB from 8 writers,
// sizes log-uniform and fixed by the file index, so a scaled-down run writes
// a prefix of the full run's files with the same sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "burst_runner.h"
#include "small_files_model.h"
#include "temp_dir.h"
#include "workload_model.h"

namespace ckptfs::replay {

using ckptfs::testing::TempDir;
namespace {

WorkloadSpec SmallFiles(double scale = 1.0) {
  WorkloadSpec spec = FindPreset("small-files").value();
  spec.scale = scale;
  return spec;
}

CheckpointPlan PlanFor(const WorkloadSpec& spec) {
  Result<CheckpointPlan> plan = BuildCheckpointPlan(spec, {1, 1});
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return std::move(plan).value();
}

TEST(SmallFiles, PresetWrites20000FilesFrom8WritersFsyncingEach) {
  WorkloadSpec spec = SmallFiles();
  EXPECT_TRUE(spec.fsync);
  EXPECT_EQ(spec.payload, PayloadKind::kRandom);
  CheckpointPlan plan = PlanFor(spec);
  EXPECT_EQ(plan.FileCount(), 20000u);
  ASSERT_EQ(plan.ranks.size(), 8u);
  for (const RankPlan& rank : plan.ranks) EXPECT_EQ(rank.files.size(), 2500u);
  EXPECT_EQ(plan.directory, "global_epoch1_step1");
  EXPECT_EQ(plan.ranks[3].files[1].relative_path, "global_epoch1_step1/shard_00011.pt");
}

TEST(SmallFiles, FileSizesSpanEachOctaveEvenly) {
  CheckpointPlan plan = PlanFor(SmallFiles());
  std::map<int, int> per_octave;
  for (const RankPlan& rank : plan.ranks) {
    for (const PlannedFile& file : rank.files) {
      const uint64_t bytes = file.FileBytes();
      ASSERT_GE(bytes, 64u << 10);
      ASSERT_LE(bytes, 4u << 20);
      ASSERT_EQ(file.tensor_bytes.size(), 1u);
      int octave = 0;
      while ((64ull << 10) << (octave + 1) <= bytes) ++octave;
      ++per_octave[octave];
    }
  }
  // Log-uniform over six octaves: about 3,333 files in each.
  ASSERT_EQ(per_octave.size(), 6u);
  for (auto [octave, files] : per_octave) EXPECT_NEAR(files, 20000 / 6, 200) << "octave " << octave;
  // The mean of a log-uniform size is (max - min) / ln(max / min): about 0.99 MB.
  EXPECT_NEAR(plan.FileBytes() / 20000.0, (4194304.0 - 65536.0) / std::log(64.0), 2e4);
}

TEST(SmallFiles, ScaleCutsTheFileCountAndKeepsTheSizes) {
  CheckpointPlan full = PlanFor(SmallFiles());
  CheckpointPlan tenth = PlanFor(SmallFiles(0.1));
  EXPECT_EQ(tenth.FileCount(), 2000u);
  for (size_t r = 0; r < 8; ++r) {
    for (size_t i = 0; i < tenth.ranks[r].files.size(); ++i) {
      EXPECT_EQ(tenth.ranks[r].files[i].relative_path, full.ranks[r].files[i].relative_path);
      EXPECT_EQ(tenth.ranks[r].files[i].FileBytes(), full.ranks[r].files[i].FileBytes());
    }
  }
  // However small the scale, every writer gets a file.
  CheckpointPlan tiny = PlanFor(SmallFiles(1e-9));
  EXPECT_EQ(tiny.FileCount(), 8u);
  for (const RankPlan& rank : tiny.ranks) EXPECT_EQ(rank.files.size(), 1u);
}

TEST(SmallFiles, LayoutCountsWriters) {
  WorkloadSpec spec = SmallFiles(0.01);
  spec.layout.data = 16;
  CheckpointPlan plan = PlanFor(spec);
  EXPECT_EQ(plan.ranks.size(), 16u);
  EXPECT_EQ(plan.FileCount(), 200u);
  EXPECT_EQ(plan.ranks[15].files[0].relative_path, "global_epoch1_step1/shard_00015.pt");
}

TEST(SmallFiles, RejectsSizesBelowTheFraming) {
  WorkloadSpec spec = SmallFiles();
  spec.small_files.min_bytes = SmallFileFramingBytes();
  EXPECT_FALSE(ValidateSpec(spec).ok());
  spec = SmallFiles();
  spec.small_files.max_bytes = spec.small_files.min_bytes - 1;
  EXPECT_FALSE(ValidateSpec(spec).ok());
  spec = SmallFiles();
  spec.small_files.files = 0;
  EXPECT_FALSE(ValidateSpec(spec).ok());
}

TEST(SmallFiles, BurstWritesAndRestoresEveryFile) {
  TempDir dir;
  WorkloadSpec spec = SmallFiles(0.001);  // 20 files, about 20 MB
  BurstOptions options;
  options.dir = dir.path();
  options.restore = true;
  Result<std::vector<PhaseResult>> phases = RunBurst(spec, options);
  ASSERT_TRUE(phases.ok()) << phases.status().ToString();
  ASSERT_EQ(phases->size(), 2u);
  CheckpointPlan plan = PlanFor(spec);
  EXPECT_EQ((*phases)[0].files, 20u);
  EXPECT_EQ((*phases)[0].bytes, plan.FileBytes());
  const PlannedFile& file = plan.ranks[5].files[1];
  EXPECT_EQ(std::filesystem::file_size(dir.path() + "/" + file.relative_path), file.FileBytes());
}

}  // namespace
}  // namespace ckptfs::replay
