// The drain protocol's tests (drain_protocol_test.cc) against images in
// memory (memory_image.h), and the failures a cluster gives only by
// chance, made to happen at a chosen call: a write or a publication that
// fails, one that fails and yet lands, a lock taken over just before a
// publication, a daemon of the same store that takes over from a dead one
// and fences it, and garbage whose removal fails half way.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "drain_protocol.h"
#include "drainer.h"
#include "file_util.h"
#include "image_manifest.h"
#include "memory_image.h"
#include "published_manifest.h"

namespace ckptfs {
namespace {

using testing::DrainerTest;
using testing::kSegment;
using testing::kSegmentBytes;
using testing::kStoreId;
using testing::MemoryCluster;
using testing::Random;
using testing::ReadBack;
using testing::ScriptedSegment;
using Call = MemoryCluster::Call;
using Outcome = MemoryCluster::Outcome;

class MemoryBackend : public testing::ImageBackend {
 public:
  // A write takes a millisecond, so that a drain's own clock has something
  // to count.
  MemoryBackend() { cluster_.SetWriteLatency(std::chrono::milliseconds(1)); }
  std::string UniqueImage(const std::string& stem) override { return stem + "-" + std::to_string(++images_); }
  Result<std::unique_ptr<RadosImage>> Open(const std::string& image, unsigned timeout_seconds) override {
    return cluster_.Connect(image, timeout_seconds);
  }
  MemoryCluster* cluster() { return &cluster_; }

 private:
  MemoryCluster cluster_;
  int images_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Memory, DrainerTest,
                         ::testing::Values(testing::BackendParam{
                             "Memory", [] { return std::make_unique<MemoryBackend>(); }}),
                         [](const auto& info) { return info.param.name; });

class DrainerFaultTest : public DrainerTest {
 public:
  void SetUp() override {
    auto backend = std::make_unique<MemoryBackend>();
    cluster_ = backend->cluster();
    backend_ = std::move(backend);
  }

 protected:
  MemoryCluster* cluster_ = nullptr;
};

TEST_F(DrainerFaultTest, AWriteRefusedInTheMiddleOfACycleIsSentAgainAndNothingIsLost) {
  const std::string image = UniqueImage("enospc");
  ScriptedSegment source;
  const std::string bytes = Random(kSegmentBytes, 31);
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  // The third of the segment's four writes finds the cluster full.
  cluster_->Inject({.call = Call::kWrite, .error = ENOSPC, .oid_prefix = "seg.", .skip = 2});
  auto opened = OpenDrainer(image, &source);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Drainer& drainer = **opened;
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(20)).ok());
  EXPECT_GE(drainer.Stats().errors, 1u);
  EXPECT_TRUE(ReadBack(&drainer, 1) == bytes);
  auto manifest = PublishedManifest(image);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->commit_lsn, 1u);
  EXPECT_EQ(SegmentObjects(image), (std::vector<std::string>{ImageManifest::ObjectName(kSegment, 1)}));
  drainer.Stop();
}

// The in-memory counterpart of the cluster's frozen-OSD case
// (drainer_cluster_test.cc): the first write to a new object reports a
// timeout and yet made the object, as this writer's.
TEST_F(DrainerFaultTest, AFirstWriteThatTimedOutYetLandedLeavesTheObjectTheWritersOwn) {
  const std::string image = UniqueImage("landed-late");
  ScriptedSegment source;
  const std::string bytes = Random(kSegmentBytes, 32);
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  cluster_->Inject({.call = Call::kWrite, .outcome = Outcome::kFailedLater, .oid_prefix = "seg."});
  DrainOptions now;
  now.gc_delay = std::chrono::seconds(0);
  auto opened = OpenDrainer(image, &source, now);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Drainer& drainer = **opened;
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(20)).ok());
  EXPECT_GE(drainer.Stats().errors, 1u);
  EXPECT_FALSE(drainer.Stats().fenced);
  ASSERT_TRUE(drainer.Published(kSegment, 1).has_value());
  EXPECT_EQ(drainer.Published(kSegment, 1)->object, 1u) << "the segment left its own object for another";
  EXPECT_TRUE(ReadBack(&drainer, 1) == bytes);
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(20)).ok());
  EXPECT_EQ(SegmentObjects(image), (std::vector<std::string>{ImageManifest::ObjectName(kSegment, 1)}));
  EXPECT_EQ(drainer.Stats().objects_removed, 0u);
  drainer.Stop();
}

TEST_F(DrainerFaultTest, APublicationThatFailsOrTimesOutYetLandsIsPublishedAgain) {
  for (const Outcome outcome : {Outcome::kRefused, Outcome::kFailedLater}) {
    SCOPED_TRACE(outcome == Outcome::kRefused ? "refused" : "landed");
    const std::string image = UniqueImage("publish");
    ScriptedSegment source;
    const std::string first = Random(kSegmentBytes, 33);
    source.Commit(1, {{0, kSegmentBytes}}, 0, first);
    DrainOptions now;
    now.gc_delay = std::chrono::seconds(0);
    auto opened = OpenDrainer(image, &source, now);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    Drainer& drainer = **opened;
    cluster_->Inject({.call = Call::kWriteWhole, .outcome = outcome, .oid_prefix = ImageManifest::kObject});
    ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(20)).ok());
    EXPECT_EQ(drainer.Stats().errors, 1u);
    EXPECT_EQ(drainer.Stats().manifests_published, 1u);
    // And the drain goes on from there: a new use of the segment replaces
    // the first, whose object goes.
    const std::string second = Random(kSegmentBytes, 34);
    source.Commit(2, {{0, kSegmentBytes}}, 0, second);
    ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(20)).ok());
    source.Commit(2, {{0, kSegmentBytes}}, 0, second);
    ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(20)).ok());
    auto manifest = PublishedManifest(image);
    ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
    EXPECT_EQ(manifest->commit_lsn, 3u);
    EXPECT_EQ(manifest->publish_seq, 3u);
    EXPECT_TRUE(ReadBack(&drainer, 2) == second);
    const uint64_t own = drainer.Published(kSegment, 2)->object;
    EXPECT_EQ(SegmentObjects(image), (std::vector<std::string>{ImageManifest::ObjectName(kSegment, own)}));
    drainer.Stop();
  }
}

// The writer lock is broken and a successor opens the image just as the
// writer publishes: the publication is refused for its owner, the writer
// counts itself fenced, and the successor's image stands.
TEST_F(DrainerFaultTest, ALockLostJustBeforeAPublicationPublishesNothing) {
  const std::string image = UniqueImage("lost-lock");
  ScriptedSegment hung;
  hung.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 35));
  auto first = OpenDrained(image, &hung);
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  ScriptedSegment successor;
  const std::string successor_bytes = Random(kSegmentBytes, 36);
  for (int commit = 0; commit < 3; ++commit) successor.Commit(2, {{0, kSegmentBytes}}, 0, successor_bytes);
  testing::Successor second(this, image, &successor);
  cluster_->Inject({.call = Call::kWriteWhole,
                    .outcome = Outcome::kGoesOn,
                    .oid_prefix = ImageManifest::kObject,
                    .first = [&] { second.TakeOver(); }});
  hung.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 37));
  Status woke = (*first)->DrainUntil(0, std::chrono::seconds(5));
  ASSERT_TRUE(second.drained.ok()) << second.drained.ToString();
  EXPECT_FALSE(woke.ok());
  EXPECT_TRUE((*first)->Stats().fenced);
  EXPECT_EQ((*first)->Stats().manifests_published, 1u);
  EXPECT_FALSE((*first)->Published(kSegment, 1).has_value()) << "a fenced writer still offers evictions";
  auto manifest = PublishedManifest(image);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->commit_lsn, 3u) << "the fenced writer published over its successor's image";
  EXPECT_TRUE(ReadBack(second.drainer.get(), 2) == successor_bytes);
  (*first)->Stop();
  second.drainer->Stop();
}

// A daemon of the same store opens the image while the lock is still held
// under the store's cookie (its predecessor was killed, or is only hung on
// shared storage): it fences the predecessor, breaks the lock and goes on;
// the predecessor, should it wake, can do nothing more.
TEST_F(DrainerFaultTest, ADaemonOfTheSameStoreFencesItsPredecessorAndTakesTheImageOver) {
  const std::string image = UniqueImage("same-store");
  ScriptedSegment source;
  source.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 38));
  auto first = OpenDrained(image, &source);
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  // Another store is refused while the lock is held.
  ScriptedSegment other;
  auto refused = OpenDrainer(image, &other, {}, kStoreId + 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsBusy()) << refused.status().ToString();

  auto second = OpenDrainer(image, &source);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  const std::string newer = Random(kSegmentBytes, 39);
  source.Commit(2, {{0, kSegmentBytes}}, 0, newer);
  ASSERT_TRUE((*second)->DrainUntil(0, std::chrono::seconds(20)).ok());
  EXPECT_EQ((*second)->Stats().adopted_bytes, 0u);  // a new use of the segment: nothing to adopt

  source.Commit(2, {{0, kSegmentBytes}}, 0, newer);
  Status woke = (*first)->DrainUntil(0, std::chrono::seconds(5));
  EXPECT_FALSE(woke.ok());
  EXPECT_TRUE((*first)->Stats().fenced);
  EXPECT_NE(woke.ToString().find("fenced"), std::string::npos) << woke.ToString();
  EXPECT_TRUE(ReadBack(second->get(), 2) == newer);
  (*first)->Stop();
  (*second)->Stop();
}

// Garbage whose lookup or removal fails part way through a batch is
// collected by later cycles, all of it, and nothing else.
TEST_F(DrainerFaultTest, GarbageWhoseRemovalFailsHalfWayIsCollectedLater) {
  const std::string image = UniqueImage("gc");
  const uint64_t leftovers = 40;
  {
    auto admin = OpenImage(image);
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    for (uint64_t id = 1; id <= leftovers; ++id) {
      ASSERT_TRUE((*admin)->WriteWhole(ImageManifest::ObjectName(kSegment, id), "left over").ok());
    }
  }
  ScriptedSegment source;
  const std::string bytes = Random(kSegmentBytes, 40);
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  DrainOptions now;
  now.gc_delay = std::chrono::seconds(0);
  auto opened = OpenDrainer(image, &source, now);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Drainer& drainer = **opened;
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(20)).ok());
  const uint64_t own = drainer.Published(kSegment, 1)->object;
  EXPECT_EQ(own, leftovers + 1);

  // The collection's lookups fail at the 10th object, and its removals at
  // the 25th.
  cluster_->Inject({.call = Call::kOwner, .oid_prefix = "seg.", .skip = 9});
  cluster_->Inject({.call = Call::kRemove, .oid_prefix = "seg.", .skip = 24});
  for (int cycle = 0; cycle < 4 && drainer.Stats().objects_removed < leftovers; ++cycle) {
    source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
    ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(20)).ok());
  }
  EXPECT_EQ(drainer.Stats().objects_removed, leftovers);
  EXPECT_EQ(SegmentObjects(image), (std::vector<std::string>{ImageManifest::ObjectName(kSegment, own)}));
  EXPECT_TRUE(ReadBack(&drainer, 1) == bytes);
  drainer.Stop();
}

}  // namespace
}  // namespace ckptfs
