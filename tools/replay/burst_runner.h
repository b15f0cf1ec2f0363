// BurstRunner: writes (and optionally restores) a workload's checkpoints with
// one thread per rank, all ranks at once, each file written torch.save-style
// and fsynced, and times every checkpoint from first open to last fsync.
// Retention (--keep) deletes the oldest checkpoint before a new one starts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ckptfs/status.h"
#include "phase_result.h"
#include "workload_model.h"

namespace ckptfs::replay {

struct BurstOptions {
  std::string dir;
  int checkpoints = 1;  // per pass
  int passes = 1;
  int keep = 0;         // checkpoints kept on disk; 0 keeps all
  bool restore = false;
  bool drop_caches = true;
  uint64_t max_write = 64ull << 20;  // larger tensors are split into writes of this size
  bool progress = false;
};

// Runs the schedule; stops at the first I/O error or content mismatch.
Result<std::vector<PhaseResult>> RunBurst(const WorkloadSpec& spec, const BurstOptions& options);

// One rank's share of a checkpoint. Exposed so tests can write and read
// single files; `bytes_done` is bumped as data moves, for progress bars.
struct RankIo {
  std::string dir;
  PayloadKind payload = PayloadKind::kRandom;
  bool fsync = true;
  uint64_t max_write = 64ull << 20;
};
Status WriteRankFiles(const RankPlan& plan, const RankIo& io, std::vector<std::byte>& buffer,
                      const std::function<void(uint64_t)>& on_bytes);
// Reads every file back and checks size and content against the payload.
Status VerifyRankFiles(const RankPlan& plan, const RankIo& io, std::vector<std::byte>& buffer,
                       std::vector<std::byte>& scratch, const std::function<void(uint64_t)>& on_bytes);

}  // namespace ckptfs::replay
