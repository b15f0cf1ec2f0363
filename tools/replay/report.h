// Human tables and JSON documents for plans and measured phases. GB means
// 1e9 bytes and GiB 2^30 everywhere, and both are printed, because DLIO and
// MLPerf Storage mix them (MLPerf's "GB" sizes are GiB).
#pragma once

#include <string>
#include <vector>

#include "checkpoint_plan.h"
#include "phase_result.h"
#include "workload_model.h"

namespace ckptfs::replay {

// --plan: the per-rank file list of one checkpoint, then totals.
std::string FormatPlanText(const WorkloadSpec& spec, const CheckpointPlan& plan);
std::string FormatPlanJson(const WorkloadSpec& spec, const CheckpointPlan& plan);

// One row per phase: bytes, seconds, GB/s, GiB/s and the per-rank spread.
std::string FormatPhaseTable(const std::vector<PhaseResult>& phases);
std::string FormatPhasesJson(const WorkloadSpec* spec, const std::vector<PhaseResult>& phases);

}  // namespace ckptfs::replay
