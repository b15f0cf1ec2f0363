// PickVictims implementation.
#include "clean/cleaning_policy.h"

#include <algorithm>

namespace ckptfs {

std::vector<uint32_t> PickVictims(std::vector<SegmentSummary> candidates, uint64_t segment_size,
                                  size_t max_victims, uint64_t max_live_bytes,
                                  double max_live_fraction) {
  auto score = [segment_size](const SegmentSummary& s) {
    const double u = static_cast<double>(s.live_bytes) / static_cast<double>(segment_size);
    return (1.0 - u) * static_cast<double>(s.age + 1) / (1.0 + u);
  };
  std::erase_if(candidates, [&](const SegmentSummary& s) {
    return static_cast<double>(s.live_bytes) > max_live_fraction * static_cast<double>(segment_size);
  });
  std::sort(candidates.begin(), candidates.end(),
            [&](const SegmentSummary& a, const SegmentSummary& b) { return score(a) > score(b); });
  std::vector<uint32_t> victims;
  uint64_t dead = 0, live = 0;
  for (size_t i = 0; i < candidates.size() && victims.size() < max_victims; ++i) {
    if (live + candidates[i].live_bytes > max_live_bytes) continue;
    victims.push_back(candidates[i].segment);
    live += candidates[i].live_bytes;
    dead += segment_size - std::min(segment_size, candidates[i].live_bytes);
  }
  if (dead < segment_size / 4) victims.clear();
  return victims;
}

}  // namespace ckptfs
