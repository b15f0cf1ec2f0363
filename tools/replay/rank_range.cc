// Parsing is strict (digits only, no sign, no spaces) so a typo fails instead
// of silently running another set of ranks.
#include "rank_range.h"

#include <cassert>
#include <charconv>

namespace ckptfs::replay {
namespace {

bool ParseRank(std::string_view text, int& out) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

RankRange AllRanks(int world_size) { return {0, world_size - 1}; }

Result<RankRange> ParseRankRange(std::string_view text) {
  RankRange ranks;
  const size_t dash = text.find('-');
  const bool parsed = dash == std::string_view::npos
                          ? ParseRank(text, ranks.first)
                          : ParseRank(text.substr(0, dash), ranks.first) && ParseRank(text.substr(dash + 1), ranks.last);
  if (!parsed) {
    return Status::Invalid("needs A-B or A (0-based ranks, inclusive), got '" + std::string(text) + "'");
  }
  if (dash == std::string_view::npos) ranks.last = ranks.first;
  if (ranks.first > ranks.last) {
    return Status::Invalid("the first rank must not exceed the last, got '" + std::string(text) + "'");
  }
  return ranks;
}

Status CheckRankRange(RankRange ranks, int world_size) {
  if (ranks.first < 0 || ranks.first > ranks.last || ranks.last >= world_size) {
    return Status::Invalid(FormatRankRange(ranks) + " is outside the workload's ranks " +
                           FormatRankRange(AllRanks(world_size)));
  }
  return Status::Ok();
}

RankRange NodeRanks(int node, int nodes, int world_size) {
  assert(0 <= node && node < nodes && nodes <= world_size);
  const int base = world_size / nodes;
  const int larger = world_size % nodes;  // the first `larger` nodes take one rank more
  RankRange ranks;
  ranks.first = node * base + (node < larger ? node : larger);
  ranks.last = ranks.first + base + (node < larger ? 1 : 0) - 1;
  return ranks;
}

std::string FormatRankRange(RankRange ranks) {
  std::string text = std::to_string(ranks.first);
  // Appended, not "-" + ...: GCC 12 raises a false -Wrestrict on the latter.
  if (ranks.last != ranks.first) text.append("-").append(std::to_string(ranks.last));
  return text;
}

}  // namespace ckptfs::replay
