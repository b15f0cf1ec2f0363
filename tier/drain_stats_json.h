// DrainStats to and from JSON (see ckptfs/stats_json.h): the report's
// "tier" object. The target and the last error are the report's own
// fields, tier_target and tier_last_error, beside it.
#pragma once

#include "ckptfs/stats_json.h"
#include "drain_stats.h"

namespace ckptfs {

template <typename Json>
void to_json(Json& out, const DrainStats& stats) {
  out = FiguresToJson<Json>(stats, kDrainStatFields);
}
template <typename Json>
void from_json(const Json& in, DrainStats& stats) {
  FiguresFromJson(in, &stats, kDrainStatFields);
}

}  // namespace ckptfs
