// Which segments the cleaner empties next: LFS's cost-benefit choice.
//
// Cleaning a segment with live fraction u costs reading it and writing u of
// it again, and gains (1 - u) of a segment; old (cold) data is worth moving
// because it will not die soon on its own. Score = (1 - u) * age / (1 + u).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "segment/segment_table.h"

namespace ckptfs {

// Up to `max_victims` segments, best first. Segments more than
// `max_live_fraction` live are never worth it and are skipped, and a set
// whose dead space adds up to less than a quarter segment is not returned:
// cleaning it would cost far more than it frees.
// `max_live_bytes` bounds the live data the set may hold: the cleaner must
// have room to write it before the victims come free.
std::vector<uint32_t> PickVictims(std::vector<SegmentSummary> candidates, uint64_t segment_size,
                                  size_t max_victims, uint64_t max_live_bytes = std::numeric_limits<uint64_t>::max(),
                                  double max_live_fraction = 0.9);

}  // namespace ckptfs
