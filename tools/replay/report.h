// Human tables and JSON documents for plans and measured phases. GB means
// 1e9 bytes and GiB 2^30 everywhere, and both are printed, because DLIO and
// MLPerf Storage mix them (MLPerf's "GB" sizes are GiB).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checkpoint_plan.h"
#include "phase_result.h"
#include "rank_range.h"
#include "workload_model.h"

namespace ckptfs::replay {

// --plan: the per-rank file list of one checkpoint, then totals. `plan`
// holds the ranks `ranks` (all of the workload's, or one node's share); the
// JSON records them as "rank_range": [first, last], and its totals are theirs.
std::string FormatPlanText(const WorkloadSpec& spec, RankRange ranks, const CheckpointPlan& plan);
std::string FormatPlanJson(const WorkloadSpec& spec, RankRange ranks, const CheckpointPlan& plan);

// One row per phase: bytes, seconds, GB/s, GiB/s and the per-rank spread.
std::string FormatPhaseTable(const std::vector<PhaseResult>& phases);
// `spec` and `ranks_run` describe a workload run (the ranks it ran are
// recorded as "rank_range": [first, last]); a trace replay has neither.
std::string FormatPhasesJson(const WorkloadSpec* spec, std::optional<RankRange> ranks_run,
                             const std::vector<PhaseResult>& phases);

}  // namespace ckptfs::replay
