// A burst split over nodes: each node runs a block of the ranks into its own
// directory, and together the nodes write exactly the files, sizes and bytes
// of one full run; each node restores only its own ranks' files, and a
// failure names the global rank, not the thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "burst_runner.h"
#include "temp_dir.h"

namespace ckptfs::replay {

using ckptfs::testing::TempDir;
namespace {

// Three workloads with different layouts: per-step directories, files in the
// run directory itself (DLIO v2.0), and many small files dealt round-robin.
WorkloadSpec Tiny(const std::string& name) {
  WorkloadSpec spec = FindPreset(name).value();
  spec.scale = name == "small-files" ? 0.0005 : name == "llama3-405b" ? 1e-6 : 1e-7;
  if (name == "llama3-405b-dlio-v2.0") spec.payload = PayloadKind::kRandom;  // so content tells files apart
  return spec;
}

// Relative path -> content of every regular file under `root`; directories
// map to "<dir>".
using Tree = std::map<std::string, std::string>;

void AddTree(const std::string& root, Tree& tree) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    std::string relative = std::filesystem::relative(entry.path(), root).string();
    std::string content = "<dir>";
    if (entry.is_regular_file()) {
      std::ifstream in(entry.path(), std::ios::binary);
      content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    auto [at, added] = tree.emplace(relative, std::move(content));
    if (!added && at->second != "<dir>") ADD_FAILURE() << relative << " was written by two nodes";
  }
}

Result<std::vector<PhaseResult>> RunRanks(const WorkloadSpec& spec, const std::string& dir,
                                          std::optional<RankRange> ranks, bool restore_only = false) {
  BurstOptions options;
  options.dir = dir;
  options.checkpoints = 2;
  options.ranks = ranks;
  options.restore = true;
  options.restore_only = restore_only;
  options.drop_caches = false;
  return RunBurst(spec, options);
}

class TwoNodes : public ::testing::TestWithParam<std::string> {};

TEST_P(TwoNodes, HalvesWriteExactlyTheFilesAndBytesOfOneFullRun) {
  const WorkloadSpec spec = Tiny(GetParam());
  const int world = spec.layout.WorldSize();
  TempDir full, node0, node1;
  ASSERT_TRUE(RunRanks(spec, full.path(), std::nullopt).ok());
  for (auto [node, dir] : {std::pair{0, &node0}, std::pair{1, &node1}}) {
    const RankRange ranks = NodeRanks(node, 2, world);
    Result<std::vector<PhaseResult>> phases = RunRanks(spec, dir->path(), ranks);
    ASSERT_TRUE(phases.ok()) << phases.status().ToString();
    CheckpointPlan plan = BuildCheckpointPlan(spec, {1, 1}, ranks).value();
    ASSERT_EQ(phases->size(), 4u);  // two writes, two restores
    for (const PhaseResult& phase : *phases) {
      EXPECT_EQ(phase.bytes, plan.FileBytes());
      EXPECT_EQ(phase.files, plan.FileCount());
      ASSERT_EQ(phase.ranks.size(), static_cast<size_t>(ranks.Count()));
      EXPECT_EQ(phase.ranks.front().rank, ranks.first);
      EXPECT_EQ(phase.ranks.back().rank, ranks.last);
    }
  }
  Tree expected, together;
  AddTree(full.path(), expected);
  AddTree(node0.path(), together);
  AddTree(node1.path(), together);
  ASSERT_EQ(together.size(), expected.size());
  for (const auto& [path, content] : expected) {
    auto found = together.find(path);
    ASSERT_NE(found, together.end()) << path << " is missing from the nodes' directories";
    EXPECT_EQ(found->second.size(), content.size()) << path;
    EXPECT_TRUE(found->second == content) << path << " differs";
  }

  // Each node restores only its own ranks' files: its half verifies, and the
  // other half's files are not expected. Swapping the directories fails.
  EXPECT_TRUE(RunRanks(spec, node0.path(), NodeRanks(0, 2, world), true).ok());
  EXPECT_TRUE(RunRanks(spec, node1.path(), NodeRanks(1, 2, world), true).ok());
  EXPECT_FALSE(RunRanks(spec, node0.path(), NodeRanks(1, 2, world), true).ok());
  EXPECT_FALSE(RunRanks(spec, node1.path(), std::nullopt, true).ok());
}

INSTANTIATE_TEST_SUITE_P(Workloads, TwoNodes,
                         ::testing::Values("llama3-405b", "llama3-405b-dlio-v2.0", "small-files"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
                           return name;
                         });

TEST(MultiNode, AFailureNamesTheGlobalRank) {
  const WorkloadSpec spec = Tiny("llama3-405b");
  TempDir dir;
  const RankRange ranks{4, 7};
  ASSERT_TRUE(RunRanks(spec, dir.path(), ranks).ok());
  const CheckpointPlan step2 = BuildCheckpointPlan(spec, {1, 2}, ranks).value();
  const PlannedFile& victim = step2.ranks[2].files[0];
  std::filesystem::resize_file(dir.path() + "/" + victim.relative_path, 1);
  Result<std::vector<PhaseResult>> phases = RunRanks(spec, dir.path(), ranks, true);
  ASSERT_FALSE(phases.ok());
  EXPECT_NE(phases.status().message().find("rank 6: "), std::string::npos) << phases.status().message();
}

TEST(MultiNode, RetentionLeavesTheOtherRanksFilesInASharedDirectory) {
  const WorkloadSpec spec = Tiny("llama3-405b");
  TempDir dir;
  BurstOptions options;
  options.dir = dir.path();
  options.ranks = RankRange{4, 7};
  ASSERT_TRUE(RunBurst(spec, options).ok());  // the other node's step 1
  options.ranks = RankRange{0, 3};
  options.checkpoints = 2;
  options.keep = 1;
  Result<std::vector<PhaseResult>> phases = RunBurst(spec, options);
  ASSERT_TRUE(phases.ok()) << phases.status().ToString();
  CheckpointPlan step1 = BuildCheckpointPlan(spec, {1, 1}).value();
  for (const RankPlan& rank : step1.ranks) {
    for (const PlannedFile& file : rank.files) {
      EXPECT_EQ(std::filesystem::exists(dir.path() + "/" + file.relative_path), rank.rank >= 4) << file.relative_path;
    }
  }
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/global_epoch1_step2"));
}

TEST(MultiNode, OnlyTheNodeWithRankZeroKeepsTheTrainingLog) {
  const WorkloadSpec spec = Tiny("llama3-405b");
  for (RankRange ranks : {RankRange{0, 3}, RankRange{4, 7}}) {
    TempDir dir;
    BurstOptions options;
    options.dir = dir.path();
    options.ranks = ranks;
    options.appender_bytes_per_s = 64 << 10;
    Result<std::vector<PhaseResult>> phases = RunBurst(spec, options);
    ASSERT_TRUE(phases.ok()) << phases.status().ToString();
    EXPECT_EQ(std::filesystem::exists(dir.path() + "/train.log"), ranks.first == 0);
    const std::string& note = phases->back().notes.back();
    if (ranks.first == 0) {
      EXPECT_NE(note.find("bytes to train.log"), std::string::npos) << note;
    } else {
      EXPECT_EQ(note, "appender: not run: train.log is rank 0's, and this run has ranks 4-7");
    }
  }
}

TEST(MultiNode, RanksOutsideTheWorkloadAreRejected) {
  TempDir dir;
  BurstOptions options;
  options.dir = dir.path();
  options.ranks = RankRange{6, 8};
  Result<std::vector<PhaseResult>> phases = RunBurst(Tiny("llama3-405b"), options);
  ASSERT_FALSE(phases.ok());
  EXPECT_EQ(phases.status().message(), "--ranks: 6-8 is outside the workload's ranks 0-7");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace ckptfs::replay
