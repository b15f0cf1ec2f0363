// Workload arithmetic: byte totals and file counts against closed forms of
// DLIO's formulas, and the presets against MLPerf Storage's published sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "dlio_current_model.h"
#include "workload_model.h"

namespace ckptfs::replay {
namespace {

constexpr double kGiB = 1073741824.0;

CheckpointPlan PlanFor(const std::string& preset, double scale = 1.0) {
  Result<WorkloadSpec> spec = FindPreset(preset);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  spec->scale = scale;
  Result<CheckpointPlan> plan = BuildCheckpointPlan(*spec, {1, 1});
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return std::move(plan).value();
}

// Bytes in files whose name contains `marker` ("model_states" or "optim_states").
uint64_t BytesIn(const CheckpointPlan& plan, const std::string& marker) {
  uint64_t total = 0;
  for (const RankPlan& rank : plan.ranks) {
    for (const PlannedFile& file : rank.files) {
      if (file.relative_path.find(marker) != std::string::npos) total += file.TensorBytes();
    }
  }
  return total;
}

double RelativeError(double value, double reference) { return std::fabs(value - reference) / reference; }

TEST(WorkloadModel, Llama405BParameterCountWithGroupedQueryAttention) {
  Result<WorkloadSpec> spec = FindPreset("llama3-405b");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(DlioParameterCount(spec->shape), 405853388800ull);
  // Without GQA (kv heads = heads) q, k and v would all be hidden x hidden.
  TransformerShape full_attention = spec->shape;
  full_attention.kv_heads = full_attention.attention_heads;
  const uint64_t h = 16384, l = 126, kv_columns = 1024;
  EXPECT_EQ(DlioParameterCount(full_attention) - DlioParameterCount(spec->shape), l * h * 2 * (h - kv_columns));
}

TEST(WorkloadModel, Llama405BAtTp4Pp2TotalsMatchClosedForm) {
  const uint64_t h = 16384, l = 126, ffn = 53248, vocab = 128256, kv = 1024, tp = 4;
  const uint64_t params = 405853388800ull;
  // Matrices split over tensor parallelism sum back to one copy; norms are
  // replicated on every tensor-parallel rank.
  const uint64_t model_elements =
      2 * vocab * h + l * (h * (h + 2 * kv) + h * h + 3 * ffn * h) + tp * (2 * h * l + h);
  // Eight ranks each hold three (params/8, 5h) fp32 groups.
  const uint64_t optimizer_bytes = 8 * 4 * 3 * (params / 8 + 5 * h);
  CheckpointPlan plan = PlanFor("llama3-405b");
  EXPECT_EQ(BytesIn(plan, "model_states"), 2 * model_elements);
  EXPECT_EQ(BytesIn(plan, "optim_states"), optimizer_bytes);
  EXPECT_EQ(plan.TensorBytes(), 2 * model_elements + optimizer_bytes);
  EXPECT_NEAR(plan.TensorBytes() / 1e12, 5.68, 0.005);
  EXPECT_EQ(plan.FileCount(), 524u);
}

TEST(WorkloadModel, Llama405BFileCountsPerRankFollowPipelineStages) {
  CheckpointPlan plan = PlanFor("llama3-405b");
  ASSERT_EQ(plan.ranks.size(), 8u);
  for (const RankPlan& rank : plan.ranks) {
    // Stage 0 holds the embedding and layers 1-63; stage 1 layers 64-126,
    // lm_head and the final norm; plus one optimizer file each.
    EXPECT_EQ(rank.files.size(), rank.rank < 4 ? 65u : 66u) << "rank " << rank.rank;
  }
  EXPECT_EQ(plan.ranks[5].files.front().relative_path, "global_epoch1_step1/layer_64-model_5_model_states.pt");
  EXPECT_EQ(plan.ranks[5].files.back().relative_path,
            "global_epoch1_step1/zero_pp_rank_0_mp_rank_5_optim_states.pt");
  EXPECT_EQ(plan.directory, "global_epoch1_step1");
}

TEST(WorkloadModel, LayerRangesSpreadRemainderOverFirstStages) {
  Result<WorkloadSpec> spec = FindPreset("llama3-405b");
  ASSERT_TRUE(spec.ok());
  spec->layout.pipeline = 4;  // 126 = 4 * 31 + 2: stages 0 and 1 get 32 layers
  EXPECT_EQ(DlioLayerRange(*spec, 0).first, 0u);
  EXPECT_EQ(DlioLayerRange(*spec, 0).last, 32u);
  EXPECT_EQ(DlioLayerRange(*spec, 1).first, 33u);
  EXPECT_EQ(DlioLayerRange(*spec, 1).last, 64u);
  EXPECT_EQ(DlioLayerRange(*spec, 2).first, 65u);
  EXPECT_EQ(DlioLayerRange(*spec, 2).last, 95u);
  EXPECT_EQ(DlioLayerRange(*spec, 3).first, 96u);
  EXPECT_EQ(DlioLayerRange(*spec, 3).last, 128u);
}

TEST(WorkloadModel, MlperfLayoutFileCountsPerRank) {
  CheckpointPlan plan = PlanFor("llama3-405b-mlperf");
  ASSERT_EQ(plan.ranks.size(), 512u);
  for (const RankPlan& rank : plan.ranks) {
    int data_rank = rank.rank / 256;
    int stage = (rank.rank / 8) % 32;
    // ZeRO-1: only data rank 0 saves layers. 126 = 32 * 3 + 30, so stages
    // 0-29 get 4 layers, 30-31 get 3; the first also has the embedding, the
    // last lm_head and the final norm.
    size_t layers = stage < 30 ? 4 : 3;
    if (stage == 0) layers += 1;
    if (stage == 31) layers += 2;
    size_t expected = data_rank == 0 ? layers + 1 : 1;
    ASSERT_EQ(rank.files.size(), expected) << "rank " << rank.rank;
  }
}

TEST(WorkloadModel, DlioV2PresetMatchesPublishedRun) {
  CheckpointPlan plan = PlanFor("llama3-405b-dlio-v2.0");
  const uint64_t groups = 1009254400ull + 865075200ull + 793600ull;
  const uint64_t layer_file = 4358152160ull + 704347824ull;
  // Model file per rank, groups saved twice plus combined, 80 + tp layer files on even ranks.
  EXPECT_EQ(plan.TensorBytes(), 8 * 16384 + 8 * 3 * groups + 4 * 84 * layer_file);
  EXPECT_EQ(plan.TensorBytes(), 1746003082496ull);
  EXPECT_NEAR(plan.TensorBytes() / kGiB, 1626.1, 0.1);
  EXPECT_EQ(plan.FileCount(), 352u);
  for (const RankPlan& rank : plan.ranks) {
    EXPECT_EQ(rank.files.size(), rank.rank % 2 == 0 ? 86u : 2u) << "rank " << rank.rank;
  }
  EXPECT_EQ(plan.ranks[2].files[2].relative_path, "layer-0-1-1-2.pt");
  Result<WorkloadSpec> spec = FindPreset("llama3-405b-dlio-v2.0");
  EXPECT_EQ(spec->payload, PayloadKind::kZeros);
  EXPECT_FALSE(spec->fsync);
}

TEST(WorkloadModel, PresetsMatchMlperfStorageSizesWithinOnePercent) {
  // MLPerf Storage v2.0 lists these sizes; its "GB" are GiB.
  EXPECT_LT(RelativeError(PlanFor("llama3-8b").TensorBytes() / kGiB, 105), 0.01);
  EXPECT_LT(RelativeError(PlanFor("llama3-70b").TensorBytes() / kGiB, 912), 0.01);
  CheckpointPlan plan = PlanFor("llama3-405b-mlperf");
  EXPECT_LT(RelativeError(BytesIn(plan, "model_states") / kGiB, 755), 0.01);
  EXPECT_LT(RelativeError(BytesIn(plan, "optim_states") / kGiB, 4533), 0.01);
  EXPECT_LT(RelativeError(plan.TensorBytes() / kGiB, 755 + 4533), 0.01);
  // The size hardly depends on the layout: 8 ranks or 512 write the same state.
  EXPECT_LT(RelativeError(PlanFor("llama3-405b").TensorBytes(), plan.TensorBytes()), 0.001);
}

TEST(WorkloadModel, ZeroStage3ShardsEveryRankIntoTwoFiles) {
  CheckpointPlan plan = PlanFor("llama3-8b");
  ASSERT_EQ(plan.ranks.size(), 8u);
  for (const RankPlan& rank : plan.ranks) {
    ASSERT_EQ(rank.files.size(), 2u);
    std::string dp = std::to_string(rank.rank);
    EXPECT_EQ(rank.files[0].relative_path, "global_epoch1_step1/zero_pp_rank_" + dp + "_mp_rank_0_model_states.pt");
    EXPECT_EQ(rank.files[1].relative_path, "global_epoch1_step1/zero_pp_rank_" + dp + "_mp_rank_0_optim_states.pt");
  }
}

TEST(WorkloadModel, WithoutZeroOnlyFirstModelParallelGroupWrites) {
  Result<WorkloadSpec> spec = FindPreset("llama3-405b");
  ASSERT_TRUE(spec.ok());
  spec->layout.data = 2;
  spec->layout.zero_stage = 0;
  Result<CheckpointPlan> plan = BuildCheckpointPlan(*spec, {1, 1});
  ASSERT_TRUE(plan.ok());
  for (const RankPlan& rank : plan->ranks) {
    EXPECT_EQ(rank.files.empty(), rank.rank >= 8) << "rank " << rank.rank;
  }
}

TEST(WorkloadModel, ScaleShrinksTensorsButKeepsFiles) {
  CheckpointPlan full = PlanFor("llama3-405b");
  CheckpointPlan small = PlanFor("llama3-405b", 0.0003);
  EXPECT_EQ(small.FileCount(), full.FileCount());
  EXPECT_GE(small.FileBytes(), 1.5e9);  // the documented reduced scale
  EXPECT_NEAR(small.TensorBytes() / (0.0003 * full.TensorBytes()), 1.0, 0.001);
  // Even a tiny scale keeps every tensor (and so every write) present.
  CheckpointPlan tiny = PlanFor("llama3-405b", 1e-9);
  EXPECT_EQ(tiny.FileCount(), full.FileCount());
  EXPECT_EQ(tiny.ranks[0].files[1].tensor_bytes.size(), 6u);
}

TEST(WorkloadModel, CheckpointScheduleNumbersPassesAsEpochs) {
  std::vector<CheckpointId> ids = CheckpointSchedule(2, 2);
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(ids[0].epoch, 1);
  EXPECT_EQ(ids[0].step, 1);
  EXPECT_EQ(ids[3].epoch, 2);
  EXPECT_EQ(ids[3].step, 4);
}

TEST(WorkloadModel, RejectsUnusableSpecs) {
  Result<WorkloadSpec> spec = FindPreset("llama3-405b");
  ASSERT_TRUE(spec.ok());
  WorkloadSpec bad = *spec;
  bad.shape.attention_heads = 100;  // does not divide 16384
  EXPECT_FALSE(ValidateSpec(bad).ok());
  bad = *spec;
  bad.layout.zero_stage = 3;  // with pp = 2
  EXPECT_FALSE(ValidateSpec(bad).ok());
  bad = *spec;
  bad.scale = 0;
  EXPECT_FALSE(BuildCheckpointPlan(bad, {1, 1}).ok());
  EXPECT_TRUE(FindPreset("llama3-9000b").status().IsNotFound());
}

}  // namespace
}  // namespace ckptfs::replay
