// Replays a Trace under a directory: one thread per rank that has
// operations (rank numbers may have gaps, as in one node's share), each rank's
// operations in trace order, all ranks concurrently; with timing on, each
// operation waits until its recorded time. Written bytes come from the
// payload pattern (by path and offset), so reads can be verified.
#pragma once

#include <string>

#include "ckptfs/status.h"
#include "phase_result.h"
#include "payload.h"
#include "trace.h"

namespace ckptfs::replay {

struct ReplayOptions {
  std::string dir;
  bool honor_timing = false;
  bool verify_reads = false;  // reads must match what a replayed write put there
  PayloadKind payload = PayloadKind::kRandom;
  bool progress = false;
  std::string label = "trace";
};

// Errors name the trace line of the operation that failed.
Result<PhaseResult> ReplayTrace(const Trace& trace, const ReplayOptions& options);

}  // namespace ckptfs::replay
