// BurstRunner: writes (and optionally restores) a workload's checkpoints with
// one thread per rank, all ranks at once, each file written torch.save-style
// and fsynced, and times every checkpoint from first open to last fsync.
// Retention (--keep) deletes the oldest checkpoint before a new one starts;
// milestones (--keep-every) are kept for good and do not count against it.
// An appender (--appender-rate) writes a training log beside the
// checkpoints for the whole run, as a trainer's logger does.
// A run may be limited to a range of the workload's ranks (one node's share of
// a multi-node run): those ranks write, restore and delete exactly the files
// they have in a full run, and no others. The training log belongs to rank 0,
// so only a run that holds rank 0 appends it.
// A restore reads with read() or through mmap (as torch.load(mmap=True) does);
// --restore-only reads back what an earlier run with the same options wrote,
// so the two ways of reading can be timed on the same bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ckptfs/status.h"
#include "phase_result.h"
#include "rank_range.h"
#include "workload_model.h"

namespace ckptfs::replay {

enum class RestoreMode { kRead, kMmap };
Result<RestoreMode> ParseRestoreMode(std::string_view name);

struct BurstOptions {
  std::string dir;
  int checkpoints = 1;  // per pass
  int passes = 1;
  int keep = 0;         // checkpoints kept on disk; 0 keeps all
  int keep_every = 0;   // every Nth checkpoint (counted across passes) is a milestone, never deleted
  uint64_t appender_bytes_per_s = 0;  // a log appended to DIR/train.log all along; 0: none
  std::optional<RankRange> ranks;     // run only these ranks; nullopt: every rank
  bool restore = false;
  bool restore_only = false;  // skip the writes; every scheduled checkpoint must exist
  RestoreMode restore_mode = RestoreMode::kRead;
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
  RestoreMode restore_mode = RestoreMode::kRead;
};
Status WriteRankFiles(const RankPlan& plan, const RankIo& io, std::vector<std::byte>& buffer,
                      const std::function<void(uint64_t)>& on_bytes);
// Reads every file back and checks size and content against the payload. In
// mmap mode `buffer` is not used: the mapped pages are compared in place.
Status VerifyRankFiles(const RankPlan& plan, const RankIo& io, std::vector<std::byte>& buffer,
                       const std::function<void(uint64_t)>& on_bytes);

}  // namespace ckptfs::replay
