// PhaseResult: the measured outcome of one burst phase (a checkpoint write, a
// restore, a trace replay), shared by the runners and the report writers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ckptfs::replay {

struct RankResult {
  int rank = 0;
  uint64_t bytes = 0;
  uint64_t files = 0;
  double seconds = 0;
};

struct PhaseResult {
  std::string kind;   // "write", "restore" or "replay"
  std::string label;  // which checkpoint or trace
  uint64_t bytes = 0;
  uint64_t files = 0;
  double seconds = 0;  // the slowest rank's finish, measured from the first start
  std::vector<RankResult> ranks;
  std::vector<std::string> notes;  // e.g. "page cache not dropped: ..."

  double BytesPerSecond() const { return seconds > 0 ? bytes / seconds : 0; }
};

}  // namespace ckptfs::replay
