// StatField: one figure of a stats struct (StoreStats, DrainStats) as the
// reports see it: its name, whether it is a counter or a gauge, what it
// counts, and how to read and set it as an integer. Each struct lists its
// figures once, in one X-macro (store_stats.h, tier/drain_stats.h), from
// which come the struct's members and its table of StatFields; the
// daemon's text, JSON and Prometheus reports and the tools that read the
// JSON back (stats_json.h) all go by that table.
#pragma once

#include <cstdint>

namespace ckptfs {

// How a figure behaves: a counter only grows while the daemon runs; a
// gauge is a level now.
enum class StatKind { kCounter, kGauge };

template <typename Stats>
struct StatField {
  const char* name;  // in the JSON and the text; Prometheus's name follows from it
  StatKind kind;
  const char* help;  // what it counts, for people (Prometheus's HELP)
  uint64_t (*get)(const Stats&);
  void (*set)(Stats&, uint64_t);
};

}  // namespace ckptfs

// For a stats X-macro: a member of TYPE, zero at first.
#define CKPTFS_STAT_MEMBER(type, name, kind, help) type name = 0;
// For a stats X-macro: the StatField of a member of `Stats`, a type alias
// in the scope of the table.
#define CKPTFS_STAT_FIELD(type, name, kind, help)                                              \
  ::ckptfs::StatField<Stats>{#name, ::ckptfs::StatKind::kind, help,                           \
                             [](const Stats& s) -> uint64_t { return static_cast<uint64_t>(s.name); }, \
                             [](Stats& s, uint64_t v) { s.name = static_cast<type>(v); }},
