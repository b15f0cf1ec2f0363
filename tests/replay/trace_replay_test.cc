// Trace replay into a temporary directory: an emitted workload trace must
// leave exactly the files the burst runner writes, the recorded torch.save
// trace must reproduce its file sizes, and a failing op names its line.
#include <gtest/gtest.h>

#include <filesystem>

#include "burst_runner.h"
#include "plan_trace.h"
#include "strace_convert.h"
#include "temp_dir.h"
#include "trace_replayer.h"

namespace ckptfs::replay {

using ckptfs::testing::TempDir;
namespace {

TEST(TraceReplay, EmittedWorkloadTraceReplaysToVerifiableFiles) {
  TempDir dir;
  WorkloadSpec spec = FindPreset("llama3-405b").value();
  spec.scale = 1e-6;
  CheckpointPlan plan = BuildCheckpointPlan(spec, {1, 1}).value();
  PlanTraceOptions trace_options;
  trace_options.include_restore = true;
  trace_options.max_write = 1 << 16;
  Trace trace = TraceFromPlans({plan}, trace_options);
  // Through text and back, as a file on disk would go.
  Result<Trace> parsed = ParseTrace(FormatTrace(trace));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->RankCount(), 8);

  ReplayOptions options;
  options.dir = dir.path();
  options.verify_reads = true;
  Result<PhaseResult> phase = ReplayTrace(*parsed, options);
  ASSERT_TRUE(phase.ok()) << phase.status().ToString();
  EXPECT_EQ(phase->bytes, 2 * plan.FileBytes());  // written, then read back
  // The burst runner's verifier accepts what the replay wrote: same bytes.
  RankIo io;
  io.dir = dir.path();
  std::vector<std::byte> buffer;
  for (const RankPlan& rank : plan.ranks) {
    Status st = VerifyRankFiles(rank, io, buffer, [](uint64_t) {});
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
}

TEST(TraceReplay, TraceOfOneNodesShareReplaysOnlyItsRanks) {
  TempDir dir;
  WorkloadSpec spec = FindPreset("llama3-405b").value();
  spec.scale = 1e-6;
  const RankRange share{4, 7};
  CheckpointPlan plan = BuildCheckpointPlan(spec, {1, 1}, share).value();
  Result<Trace> trace = ParseTrace(FormatTrace(TraceFromPlans({plan}, {})));
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ReplayOptions options;
  options.dir = dir.path();
  Result<PhaseResult> phase = ReplayTrace(*trace, options);
  ASSERT_TRUE(phase.ok()) << phase.status().ToString();
  ASSERT_EQ(phase->ranks.size(), 4u);  // ranks 0-3 have nothing to do and are not reported
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(phase->ranks[i].rank, share.first + static_cast<int>(i));
    EXPECT_EQ(phase->ranks[i].bytes, plan.ranks[i].FileBytes());
  }
  RankIo io;
  io.dir = dir.path();
  std::vector<std::byte> buffer;
  for (const RankPlan& rank : plan.ranks) {
    Status st = VerifyRankFiles(rank, io, buffer, [](uint64_t) {});
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
}

TEST(TraceReplay, AFailureNamesTheRankOfTheTrace) {
  TempDir dir;
  Result<Trace> trace = ParseTrace(
      "ckpt-trace v1\n"
      "5 0 open missing 0 0\n");
  ASSERT_TRUE(trace.ok());
  ReplayOptions options;
  options.dir = dir.path();
  Result<PhaseResult> phase = ReplayTrace(*trace, options);
  ASSERT_FALSE(phase.ok());
  EXPECT_EQ(phase.status().message().rfind("rank 5: ", 0), 0u) << phase.status().message();
}

TEST(TraceReplay, RecordedTorchSaveTraceReproducesFileSizes) {
  TempDir dir;
  Result<Trace> trace =
      ConvertStraceFile(std::string(CKPTFS_REPLAY_TEST_DATA) + "/torch_save_2ranks.strace", {});
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ReplayOptions options;
  options.dir = dir.path();
  Result<PhaseResult> phase = ReplayTrace(*trace, options);
  ASSERT_TRUE(phase.ok()) << phase.status().ToString();
  EXPECT_EQ(std::filesystem::file_size(dir.path() + "/global_step10/mp_rank_01_model_states.pt"), 199327u);
  EXPECT_EQ(std::filesystem::file_size(dir.path() + "/global_step10/zero_pp_rank_1_mp_rank_00_optim_states.pt"),
            399987u);
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/latest"));  // renamed into place
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/latest.tmp"));
}

TEST(TraceReplay, VerifiedReadOfForeignDataFailsWithTheTraceLine) {
  TempDir dir;
  Result<Trace> trace = ParseTrace(
      "ckpt-trace v1\n"
      "0 0 create f 0 0\n"
      "0 0 write f 0 4096\n"
      "0 0 close f 0 0\n"
      "0 0 open g 0 0\n");
  ASSERT_TRUE(trace.ok());
  ReplayOptions options;
  options.dir = dir.path();
  Result<PhaseResult> phase = ReplayTrace(*trace, options);
  ASSERT_FALSE(phase.ok());
  EXPECT_NE(phase.status().message().find("trace line 5"), std::string::npos) << phase.status().message();

  // Reading data the trace did not write is caught when verifying.
  Result<Trace> reread = ParseTrace(
      "ckpt-trace v1\n"
      "0 0 open f 0 0\n"
      "0 0 read f 0 4096\n");
  ASSERT_TRUE(reread.ok());
  options.verify_reads = true;
  EXPECT_TRUE(ReplayTrace(*reread, options).ok());
  options.payload = PayloadKind::kZeros;
  Result<PhaseResult> mismatch = ReplayTrace(*reread, options);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_TRUE(mismatch.status().IsCorruption());
}

}  // namespace
}  // namespace ckptfs::replay
