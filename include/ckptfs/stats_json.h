// The stats structs (StoreStats, DrainStats) to and from JSON, going by
// their tables of StatFields: the daemon writes its report with to_json,
// and the tools read it back with from_json, so a figure is named in one
// place only. Each struct is an object of integers (booleans as 0 and 1);
// a figure a report lacks (an older daemon's) reads as 0.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>

#include "ckptfs/stat_field.h"
#include "ckptfs/store_stats.h"

namespace ckptfs {

template <typename Json, typename Stats, size_t N>
Json FiguresToJson(const Stats& stats, const StatField<Stats> (&fields)[N]) {
  Json out = Json::object();
  for (const StatField<Stats>& f : fields) out[f.name] = f.get(stats);
  return out;
}

template <typename Json, typename Stats, size_t N>
void FiguresFromJson(const Json& in, Stats* stats, const StatField<Stats> (&fields)[N]) {
  for (const StatField<Stats>& f : fields) {
    auto it = in.find(f.name);
    f.set(*stats, it != in.end() && it->is_number_unsigned() ? it->template get<uint64_t>() : 0);
  }
}

template <typename Json>
void to_json(Json& out, const StoreStats& stats) {
  out = FiguresToJson<Json>(stats, kStoreStatFields);
}
template <typename Json>
void from_json(const Json& in, StoreStats& stats) {
  FiguresFromJson(in, &stats, kStoreStatFields);
}

}  // namespace ckptfs
