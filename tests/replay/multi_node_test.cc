// A burst split over nodes (--node I --nodes N, --ranks A-B): each node runs
// a block of the ranks into its own directory, and together the nodes write
// exactly the files, sizes and bytes of one full run; each node restores only
// its own ranks' files, a failure names the global rank, not the thread, and
// the plan and the JSON result cover the share that ran.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "burst_runner.h"
#include "options.h"
#include "report.h"
#include "temp_dir.h"

namespace ckptfs::replay {

using ckptfs::testing::TempDir;
namespace {

// The 405B burst at about 6 MB.
WorkloadSpec Tiny405B() {
  WorkloadSpec spec = FindPreset("llama3-405b").value();
  spec.scale = 1e-6;
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

Result<std::vector<PhaseResult>> RunRanks(const WorkloadSpec& spec, const std::string& dir, RankRange ranks,
                                          bool restore_only = false) {
  BurstOptions options;
  options.dir = dir;
  options.checkpoints = 2;
  options.ranks = ranks;
  options.restore_only = restore_only;
  return RunBurst(spec, options);
}

// A workload at a tiny scale, as a command line.
struct TinyWorkload {
  std::string name;
  std::vector<std::string> args;
};

// What ckpt-replay runs for `args` (a --workload run): parsed as main() would,
// then run. `options` receives the parse.
Result<std::vector<PhaseResult>> RunCommandLine(const std::vector<std::string>& args, Options& options) {
  std::vector<std::string_view> views(args.begin(), args.end());
  CKPTFS_ASSIGN_OR_RETURN(options, ParseOptions(views));
  if (options.mode != Mode::kRunWorkload) return Status::Invalid("not a workload run");
  return RunBurst(options.spec, options.burst);
}

class TwoNodes : public ::testing::TestWithParam<TinyWorkload> {
 protected:
  // Two checkpoints written and restored into `dir`, by the ranks `share`
  // picks ("--node 1 --nodes 2"; nothing: all), or only restored.
  Result<std::vector<PhaseResult>> Burst(const std::string& dir, const std::vector<std::string>& share,
                                         bool restore_only = false) {
    std::vector<std::string> args = {"--workload", GetParam().name, "--dir", dir, "--checkpoints", "2",
                                     restore_only ? "--restore-only" : "--restore", "--no-drop-caches", "--quiet"};
    args.insert(args.end(), GetParam().args.begin(), GetParam().args.end());
    args.insert(args.end(), share.begin(), share.end());
    return RunCommandLine(args, options_);
  }

  Options options_;  // of the last Burst()
};

TEST_P(TwoNodes, HalvesWriteExactlyTheFilesAndBytesOfOneFullRun) {
  const std::vector<std::string> node0_args = {"--node", "0", "--nodes", "2"};
  const std::vector<std::string> node1_args = {"--node", "1", "--nodes", "2"};
  TempDir full, node0, node1;
  ASSERT_TRUE(Burst(full.path(), {}).ok());
  for (auto [share, dir] : {std::pair{&node0_args, &node0}, std::pair{&node1_args, &node1}}) {
    Result<std::vector<PhaseResult>> phases = Burst(dir->path(), *share);
    ASSERT_TRUE(phases.ok()) << phases.status().ToString();
    const RankRange ranks = options_.burst.ranks.value();
    EXPECT_EQ(ranks, NodeRanks(dir == &node0 ? 0 : 1, 2, options_.spec.layout.WorldSize()));
    CheckpointPlan plan = BuildCheckpointPlan(options_.spec, {1, 1}, ranks).value();
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
  EXPECT_TRUE(Burst(node0.path(), node0_args, true).ok());
  EXPECT_TRUE(Burst(node1.path(), node1_args, true).ok());
  EXPECT_FALSE(Burst(node0.path(), node1_args, true).ok());
  EXPECT_FALSE(Burst(node1.path(), {}, true).ok());
}

// The payload is random (so every file's bytes are its own) but for a seed
// fixed by its path, so the full run and the halves can be compared byte for
// byte. The DLIO v2.0 layout writes into the run directory itself.
INSTANTIATE_TEST_SUITE_P(Workloads, TwoNodes,
                         ::testing::Values(TinyWorkload{"llama3-405b", {"--scale", "1e-6"}},
                                           TinyWorkload{"llama3-405b-dlio-v2.0", {"--scale", "1e-7", "--payload", "random"}},
                                           TinyWorkload{"small-files", {"--scale", "0.0005"}}),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
                           return name;
                         });

TEST(MultiNode, AFailureNamesTheGlobalRank) {
  const WorkloadSpec spec = Tiny405B();
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
  const WorkloadSpec spec = Tiny405B();
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
  const WorkloadSpec spec = Tiny405B();
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

TEST(MultiNode, PlanOfAShareListsAndTotalsOnlyItsFiles) {
  const WorkloadSpec spec = FindPreset("llama3-405b").value();
  const RankRange ranks{4, 7};
  const CheckpointPlan part = BuildCheckpointPlan(spec, {1, 1}, ranks).value();
  const CheckpointPlan full = BuildCheckpointPlan(spec, {1, 1}).value();
  const nlohmann::json json = nlohmann::json::parse(FormatPlanJson(spec, ranks, part));
  EXPECT_EQ(json["rank_range"], nlohmann::json::array({4, 7}));
  ASSERT_EQ(json["ranks"].size(), 4u);
  EXPECT_EQ(json["ranks"][0]["rank"], 4);
  EXPECT_EQ(json["totals"]["files"], 264);  // ranks 4-7 of 524 files: 66 each
  EXPECT_EQ(json["totals"]["file_bytes"], part.FileBytes());
  EXPECT_EQ(json["workload"]["ranks"], 8);  // the workload is still the whole job
  uint64_t bytes = 0;
  for (const RankPlan& rank : full.ranks) bytes += ranks.Contains(rank.rank) ? rank.FileBytes() : 0;
  EXPECT_EQ(part.FileBytes(), bytes);
  const std::string text = FormatPlanText(spec, ranks, part);
  EXPECT_NE(text.find("total: 264 files on 4 ranks (ranks 4-7 of 8)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("rank 3:"), std::string::npos);
  EXPECT_NE(FormatPlanText(spec, AllRanks(8), full).find("total: 524 files on 8 ranks\n"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(FormatPlanJson(spec, AllRanks(8), full))["rank_range"], nlohmann::json::array({0, 7}));
}

TEST(MultiNode, ResultJsonRecordsTheRanksRun) {
  PhaseResult phase;
  phase.kind = "write";
  phase.ranks = {{4, 1, 1, 0.1}, {5, 1, 1, 0.1}};
  const WorkloadSpec spec = Tiny405B();
  EXPECT_EQ(nlohmann::json::parse(FormatPhasesJson(&spec, RankRange{4, 5}, {phase}))["rank_range"],
            nlohmann::json::array({4, 5}));
  EXPECT_FALSE(nlohmann::json::parse(FormatPhasesJson(nullptr, std::nullopt, {phase})).contains("rank_range"));
}

TEST(MultiNode, RanksOutsideTheWorkloadAreRejected) {
  TempDir dir;
  BurstOptions options;
  options.dir = dir.path();
  options.ranks = RankRange{6, 8};
  Result<std::vector<PhaseResult>> phases = RunBurst(Tiny405B(), options);
  ASSERT_FALSE(phases.ok());
  EXPECT_EQ(phases.status().message(), "--ranks: 6-8 is outside the workload's ranks 0-7");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace ckptfs::replay
