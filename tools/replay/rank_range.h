// RankRange: the global ranks of a workload that one ckpt-replay process runs,
// so that several nodes can share one burst (--ranks A-B, --node I --nodes N).
// Ranks are 0-based and the range is inclusive, as a person writes it. A rank
// writes the same files under the same names whichever process runs it, so
// the union of the nodes' directories is a full run's.
#pragma once

#include <string>
#include <string_view>

#include "ckptfs/status.h"

namespace ckptfs::replay {

struct RankRange {
  int first = 0;
  int last = 0;  // inclusive

  int Count() const { return last - first + 1; }
  bool Contains(int rank) const { return first <= rank && rank <= last; }
  bool operator==(const RankRange&) const = default;
};

// Every rank of a workload with `world_size` (>= 1) ranks.
RankRange AllRanks(int world_size);

// "A-B" or "A", with 0 <= A <= B; Invalid otherwise. Whether the ranks exist
// depends on the workload: see CheckRankRange.
Result<RankRange> ParseRankRange(std::string_view text);

// Invalid ("4-9 is outside the workload's ranks 0-7") unless every rank of
// `ranks` is below `world_size`.
Status CheckRankRange(RankRange ranks, int world_size);

// Block `node` of `nodes` contiguous blocks that together hold each of
// `world_size` ranks exactly once. Block sizes differ by at most one, the
// larger blocks first: 8 ranks over 3 nodes are 0-2, 3-5 and 6-7.
// Requires 0 <= node < nodes <= world_size.
RankRange NodeRanks(int node, int nodes, int world_size);

// "4-7", or "4" for a single rank.
std::string FormatRankRange(RankRange ranks);

}  // namespace ckptfs::replay
