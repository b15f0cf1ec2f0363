// Rank ranges for multi-node runs: strict parsing, a node split that gives
// every rank to exactly one node, and a subset's plan that is exactly its
// ranks' share of the full plan, file names and sizes included.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rank_range.h"
#include "workload_model.h"

namespace ckptfs::replay {
namespace {

TEST(RankRange, ParsesARangeOrASingleRank) {
  EXPECT_EQ(ParseRankRange("0-3").value(), (RankRange{0, 3}));
  EXPECT_EQ(ParseRankRange("4-7").value(), (RankRange{4, 7}));
  EXPECT_EQ(ParseRankRange("5").value(), (RankRange{5, 5}));
  EXPECT_EQ(ParseRankRange("2-2").value(), (RankRange{2, 2}));
  EXPECT_EQ(ParseRankRange("0").value().Count(), 1);
  EXPECT_EQ(FormatRankRange({4, 7}), "4-7");
  EXPECT_EQ(FormatRankRange({5, 5}), "5");
}

TEST(RankRange, RejectsMalformedText) {
  for (const char* text : {"", "-", "a", "1-", "-3", "1-2-3", "1..3", " 1-2", "1-2 ", "+1", "1-+2", "-1-2", "1,2",
                           "99999999999"}) {
    Result<RankRange> ranks = ParseRankRange(text);
    ASSERT_FALSE(ranks.ok()) << "'" << text << "'";
    EXPECT_EQ(ranks.status().message(),
              "needs A-B or A (0-based ranks, inclusive), got '" + std::string(text) + "'");
  }
  EXPECT_EQ(ParseRankRange("5-3").status().message(), "the first rank must not exceed the last, got '5-3'");
}

TEST(RankRange, MustLieWithinTheWorkload) {
  EXPECT_TRUE(CheckRankRange({0, 7}, 8).ok());
  EXPECT_TRUE(CheckRankRange({7, 7}, 8).ok());
  EXPECT_EQ(CheckRankRange({4, 8}, 8).message(), "4-8 is outside the workload's ranks 0-7");
  EXPECT_EQ(CheckRankRange({8, 8}, 8).message(), "8 is outside the workload's ranks 0-7");
  EXPECT_FALSE(CheckRankRange({-1, 2}, 8).ok());
  EXPECT_FALSE(CheckRankRange({3, 2}, 8).ok());
}

TEST(RankRange, NodeSplitGivesEveryRankToExactlyOneNode) {
  for (int world : {1, 2, 3, 7, 8, 16, 512}) {
    for (int nodes = 1; nodes <= world && nodes <= 40; ++nodes) {
      std::vector<int> owners(world, 0);
      int next = 0;
      int smallest = world, largest = 0;
      for (int node = 0; node < nodes; ++node) {
        RankRange ranks = NodeRanks(node, nodes, world);
        ASSERT_TRUE(CheckRankRange(ranks, world).ok()) << world << " ranks, node " << node << " of " << nodes;
        EXPECT_EQ(ranks.first, next) << "blocks are contiguous and in node order";
        next = ranks.last + 1;
        smallest = std::min(smallest, ranks.Count());
        largest = std::max(largest, ranks.Count());
        for (int rank = ranks.first; rank <= ranks.last; ++rank) ++owners[rank];
      }
      EXPECT_EQ(next, world);
      EXPECT_LE(largest - smallest, 1) << world << " ranks over " << nodes << " nodes";
      for (int rank = 0; rank < world; ++rank) ASSERT_EQ(owners[rank], 1) << "rank " << rank;
    }
  }
}

TEST(RankRange, NodeSplitGivesTheLargerBlocksFirst) {
  EXPECT_EQ(NodeRanks(0, 3, 8), (RankRange{0, 2}));
  EXPECT_EQ(NodeRanks(1, 3, 8), (RankRange{3, 5}));
  EXPECT_EQ(NodeRanks(2, 3, 8), (RankRange{6, 7}));
  EXPECT_EQ(NodeRanks(0, 2, 8), (RankRange{0, 3}));
  EXPECT_EQ(NodeRanks(1, 2, 8), (RankRange{4, 7}));
  EXPECT_EQ(NodeRanks(4, 8, 8), (RankRange{4, 4}));
  EXPECT_EQ(NodeRanks(0, 1, 8), (RankRange{0, 7}));
}

TEST(RankRange, ASubsetPlansExactlyItsRanksShareOfTheFullPlan) {
  for (const std::string& name : PresetNames()) {
    WorkloadSpec spec = FindPreset(name).value();
    spec.scale = 1e-6;
    const int world = spec.layout.WorldSize();
    CheckpointPlan full = BuildCheckpointPlan(spec, {2, 5}).value();
    for (RankRange ranks : {AllRanks(world), NodeRanks(0, 2, world), NodeRanks(1, 2, world), RankRange{world - 1, world - 1}}) {
      Result<CheckpointPlan> part = BuildCheckpointPlan(spec, {2, 5}, ranks);
      ASSERT_TRUE(part.ok()) << name << ": " << part.status().ToString();
      EXPECT_EQ(part->directory, full.directory);
      ASSERT_EQ(part->ranks.size(), static_cast<size_t>(ranks.Count())) << name;
      for (const RankPlan& rank : part->ranks) {
        const RankPlan& same = full.ranks.at(rank.rank);
        ASSERT_EQ(rank.files.size(), same.files.size()) << name << " rank " << rank.rank;
        for (size_t i = 0; i < rank.files.size(); ++i) {
          EXPECT_EQ(rank.files[i].relative_path, same.files[i].relative_path);
          EXPECT_EQ(rank.files[i].tensor_bytes, same.files[i].tensor_bytes);
        }
      }
    }
    EXPECT_EQ(BuildCheckpointPlan(spec, {1, 1}, {0, world}).status().message(),
              "0-" + std::to_string(world) + " is outside the workload's ranks " + FormatRankRange(AllRanks(world)));
  }
}

}  // namespace
}  // namespace ckptfs::replay
