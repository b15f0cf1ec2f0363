// Turns workload plans into a Trace (--emit-trace): the same operations the
// burst runner performs, so a modelled burst can be replayed, edited or run
// by other tools without the model. Times are zero: order, not pacing.
#pragma once

#include <cstdint>
#include <vector>

#include "checkpoint_plan.h"
#include "trace.h"

namespace ckptfs::replay {

struct PlanTraceOptions {
  bool fsync = true;
  bool include_restore = false;  // append a read-back of every checkpoint
  uint64_t max_write = 64ull << 20;
};

Trace TraceFromPlans(const std::vector<CheckpointPlan>& plans, const PlanTraceOptions& options);

}  // namespace ckptfs::replay
