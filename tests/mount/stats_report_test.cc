// The stats reports go by the stats tables: every figure of StoreStats and
// DrainStats appears in the JSON, the text and Prometheus's format, and the
// JSON reads back (from_json, as the tools read it) to the same values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "ckptfs/stats_json.h"
#include "drain_stats_json.h"
#include "stats_report.h"

namespace ckptfs {
namespace {

// Stats whose every figure differs from the others (a bool: 1).
StoreStats DistinctStore() {
  StoreStats s;
  uint64_t next = 1000;
  for (const auto& f : kStoreStatFields) f.set(s, next += 7);
  s.read_only = true;
  return s;
}

DrainStats DistinctDrain() {
  DrainStats d;
  uint64_t next = 5000;
  for (const auto& f : kDrainStatFields) f.set(d, next += 11);
  d.target = "rados:ckptfs/ck\"pt";
  d.last_error = "a \\ quoted\n error";
  return d;
}

TEST(StatsReportTest, TheJsonHoldsEveryFigureAndReadsBackTheSame) {
  const StoreStats store = DistinctStore();
  const DrainStats drain = DistinctDrain();
  FuseCounters fuse;
  fuse.Count(FuseOp::kWrite);
  const std::string text = RenderStatsJson(store, fuse, ChannelStatus{"io_uring", 42}, drain);
  const nlohmann::json json = nlohmann::json::parse(text);

  ASSERT_EQ(json["store"].size(), std::size(kStoreStatFields));
  const StoreStats store_back = json["store"].get<StoreStats>();
  for (const auto& f : kStoreStatFields) EXPECT_EQ(f.get(store_back), f.get(store)) << f.name;
  ASSERT_EQ(json["tier"].size(), std::size(kDrainStatFields));
  const DrainStats drain_back = json["tier"].get<DrainStats>();
  for (const auto& f : kDrainStatFields) EXPECT_EQ(f.get(drain_back), f.get(drain)) << f.name;
  EXPECT_EQ(json["tier"]["published"], 1);  // a bool as an integer, as before
  EXPECT_EQ(json["tier_target"], drain.target);
  EXPECT_EQ(json["tier_last_error"], drain.last_error);
  EXPECT_EQ(json["read_only"], true);
  EXPECT_EQ(json["channel"], "io_uring");
  EXPECT_EQ(json["ring_requests"], 42);
  EXPECT_EQ(json["fuse_requests"]["write"], 1);
}

TEST(StatsReportTest, AFigureAnOlderDaemonDidNotReportReadsAsZero) {
  const StoreStats back = nlohmann::json::parse(R"({"bytes_written": 12})").get<StoreStats>();
  EXPECT_EQ(back.bytes_written, 12u);
  EXPECT_EQ(back.commits, 0u);
}

TEST(StatsReportTest, TheTextAndPrometheusListEveryFigure) {
  const StoreStats store = DistinctStore();
  const DrainStats drain = DistinctDrain();
  FuseCounters fuse;
  const std::string text = RenderStatsText(store, fuse, ChannelStatus{}, drain);
  const std::string prom = RenderStatsPrometheus(store, fuse, ChannelStatus{}, drain, MetricLabels{"/mnt", "/s"});
  for (const auto& f : kStoreStatFields) {
    EXPECT_NE(text.find(std::string(f.name) + " "), std::string::npos) << f.name;
    EXPECT_NE(prom.find(std::to_string(f.get(store))), std::string::npos) << f.name;
    EXPECT_NE(prom.find(std::string("(store.") + f.name + ")"), std::string::npos) << f.name;
  }
  for (const auto& f : kDrainStatFields) {
    EXPECT_NE(text.find(std::string("tier.") + f.name + " "), std::string::npos) << f.name;
    EXPECT_NE(prom.find(std::string("(tier.") + f.name + ")"), std::string::npos) << f.name;
  }
  // Named with the unit last and _total on counters, milliseconds as seconds.
  EXPECT_NE(prom.find("ckptfs_written_bytes_total{"), std::string::npos);
  EXPECT_NE(prom.find("ckptfs_tier_behind_seconds{"), std::string::npos);
  EXPECT_NE(prom.find("# TYPE ckptfs_segments_free gauge"), std::string::npos);
}

}  // namespace
}  // namespace ckptfs
