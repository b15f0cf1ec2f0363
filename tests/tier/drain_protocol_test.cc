// The drain protocol's cases, run against each image backend
// (drain_protocol.h): in memory by tier_unit_tests, in seconds, and against
// the real cluster by tier_tests. What a resumed drain adopts from the
// published image must be what the segment's current use wrote (a segment
// handed out again before the first capture still holds its old bytes past
// that), and a drain given a deadline starts no write after it, an object
// that a cycle cut short sent chunks to, and no manifest named, is removed,
// and a wait for a newer image misses none published before it began. A
// writer whose lock was broken while it was hung, and that wakes between
// cycles, in the middle of one or idle, sends, publishes and removes
// nothing once its successor has opened the image. The store side is a
// segment held in memory whose incarnation, written ranges and bytes the
// test sets (scripted_segment.h).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "drain_protocol.h"
#include "drainer.h"
#include "file_util.h"
#include "image_manifest.h"
#include "published_manifest.h"

namespace ckptfs {
namespace {

using testing::DrainerTest;
using testing::kSegment;
using testing::kSegmentBytes;
using testing::kStoreId;
using testing::Random;
using testing::ReadBack;
using testing::ScriptedSegment;

TEST_P(DrainerTest, AnObjectIsAdoptedOnlyIfTheSegmentsNewUseWroteAllItHolds) {
  const std::string image = UniqueImage("resume");
  const std::string old_bytes = Random(kSegmentBytes, 1);
  ScriptedSegment source;
  // The first daemon drains the segment's first use, whole.
  source.Commit(5, {{0, kSegmentBytes}}, 0, old_bytes);
  {
    auto first = OpenDrainer(image, &source);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    ASSERT_TRUE((*first)->DrainUntil(0, std::chrono::seconds(60)).ok());
    (*first)->Stop();
  }

  // The segment is handed out again and its new use writes its first 2 MiB
  // with the same bytes as before; the rest of it still holds the old ones.
  source.Commit(7, {{0, 2 << 20}}, 0, old_bytes.substr(0, 2 << 20));
  auto second = OpenDrainer(image, &source);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  Drainer& drainer = **second;
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  // Not the first 2 MiB either: the rest of its object would then be sent
  // into it, over chunks the published manifest still names.
  EXPECT_EQ(drainer.Stats().adopted_bytes, 0u);

  // Then it writes the rest with new bytes: the image must get them.
  const std::string new_bytes = Random(kSegmentBytes - (2 << 20), 2);
  source.Commit(7, {{0, kSegmentBytes}}, 2 << 20, new_bytes);
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  std::optional<RemoteSegment> held = drainer.Published(kSegment, 7);
  ASSERT_TRUE(held.has_value());
  ASSERT_EQ(held->ranges, (std::vector<ByteRange>{{0, kSegmentBytes}}));
  std::string got(kSegmentBytes, '\0');
  ASSERT_TRUE(drainer.ReadRemote(held->object, 0, got.data(), got.size()).ok());
  EXPECT_TRUE(got.compare(0, 2 << 20, old_bytes, 0, 2 << 20) == 0);
  EXPECT_TRUE(got.compare(2 << 20, new_bytes.size(), new_bytes) == 0) << "the image kept the segment's old bytes";
  drainer.Stop();
}

TEST_P(DrainerTest, ADrainPastItsDeadlineStartsNoWriteAndTheNextOneSendsEverything) {
  const std::string image = UniqueImage("deadline");
  ScriptedSegment source;
  const std::string bytes = Random(kSegmentBytes, 3);
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  auto opened = OpenDrainer(image, &source);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Drainer& drainer = **opened;
  Status late = drainer.DrainUntil(0, std::chrono::milliseconds(0));
  EXPECT_TRUE(late.IsBusy()) << late.ToString();
  EXPECT_EQ(drainer.Stats().uploaded_bytes, 0u);
  // The reads it had started were dropped with the cycle: librados holds
  // none of their buffers, and the drain keeps none.
  EXPECT_EQ(drainer.Stats().held_send_buffers, 0u);
  EXPECT_FALSE(drainer.Stats().published);
  // The deadline was that call's alone.
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  EXPECT_EQ(drainer.Stats().uploaded_bytes, kSegmentBytes);
  std::optional<RemoteSegment> held = drainer.Published(kSegment, 1);
  ASSERT_TRUE(held.has_value());
  std::string got(kSegmentBytes, '\0');
  ASSERT_TRUE(drainer.ReadRemote(held->object, 0, got.data(), got.size()).ok());
  EXPECT_TRUE(got == bytes);
  drainer.Stop();
}

TEST_P(DrainerTest, ItsOwnClockRunsOnlyWhileACycleSends) {
  const std::string image = UniqueImage("clock");
  ScriptedSegment source;
  auto opened = OpenDrainer(image, &source);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Drainer& drainer = **opened;
  const std::string bytes = Random(kSegmentBytes, 8);
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  const uint64_t sending = drainer.Stats().sending_ms;
  EXPECT_GT(sending, 0u);  // 8 MiB into RADOS takes longer than a millisecond
  EXPECT_LE(sending, static_cast<uint64_t>(elapsed));
  EXPECT_EQ(drainer.Stats().held_send_buffers, 0u);  // none kept idle once every write arrived
  // Neither the time between cycles nor a cycle that only publishes (a
  // newer commit, nothing more to send) is its.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  EXPECT_EQ(drainer.Stats().manifests_published, 2u);
  EXPECT_EQ(drainer.Stats().sending_ms, sending);
  drainer.Stop();
}

// A writer whose lock was broken while it was only hung (a takeover with
// --no-fence, or after its fence lapsed) wakes with a newer commit: it must
// send and publish nothing over the image of the writer that opened it since.
TEST_P(DrainerTest, AWriterWhoseLockWasBrokenPublishesNothingOnceAnotherHasOpenedTheImage) {
  const std::string image = UniqueImage("claimed");
  ScriptedSegment hung;
  hung.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 9));
  auto first = OpenDrained(image, &hung);
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  BreakWriterLock(image);

  // The successor, three commits on (lsn 3), publishes its own image.
  ScriptedSegment successor;
  const std::string successor_bytes = Random(kSegmentBytes, 10);
  successor.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 9));
  successor.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 9));
  successor.Commit(2, {{0, kSegmentBytes}}, 0, successor_bytes);
  auto second = OpenDrained(image, &successor);
  ASSERT_TRUE(second.ok()) << second.status().ToString();

  // The first wakes with a commit of its own (lsn 2).
  hung.Commit(2, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 11));
  Status woke = (*first)->DrainUntil(0, std::chrono::seconds(10));
  EXPECT_FALSE(woke.ok());
  EXPECT_TRUE((*first)->Stats().fenced);
  EXPECT_EQ((*first)->Stats().uploaded_bytes, kSegmentBytes);  // nothing sent since it woke

  auto manifest = PublishedManifest(image);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->commit_lsn, 3u) << "the woken writer published over its successor's image";
  EXPECT_TRUE(ReadBack(second->get(), 2) == successor_bytes);
  (*first)->Stop();
  (*second)->Stop();
}

// A writer stalls in the middle of a cycle, after its claim was checked,
// and its successor opens meanwhile. The successor's ids start where the
// last manifest's end, as the stalled writer's did: the rest of the stalled
// cycle is for the object the successor has just made and filled.
TEST_P(DrainerTest, AWriterThatStallsInTheMiddleOfACycleWritesNothingIntoItsSuccessorsNewObject) {
  const std::string image = UniqueImage("stalled");
  ScriptedSegment hung;
  hung.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 12));
  auto first = OpenDrained(image, &hung);
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  ScriptedSegment successor;
  const std::string successor_bytes = Random(kSegmentBytes, 13);
  // Two commits: a newer one than the image holds (lsn 1).
  for (int commit = 0; commit < 2; ++commit) successor.Commit(3, {{0, kSegmentBytes}}, 0, successor_bytes);
  testing::Successor second(this, image, &successor);
  hung.StallAt(0, [&] { second.TakeOver(); });
  hung.Commit(2, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 14));
  Status woke = (*first)->DrainUntil(0, std::chrono::seconds(60));
  ASSERT_TRUE(second.drained.ok()) << second.drained.ToString();
  EXPECT_FALSE(woke.ok());
  EXPECT_TRUE((*first)->Stats().fenced);
  EXPECT_EQ((*first)->Stats().uploaded_bytes, kSegmentBytes);  // nothing arrived since it stalled
  EXPECT_TRUE(ReadBack(second.drainer.get(), 3) == successor_bytes)
      << "the stalled writer sent the rest of its cycle over its successor's object";
  (*first)->Stop();
  second.drainer->Stop();
}

// The same, for an object both writers continue: the successor takes the
// stalled writer's object over (it adopts what it published), and sends
// the segment's rest into it, which the stalled writer then sends too.
TEST_P(DrainerTest, AWriterThatStallsInTheMiddleOfACycleWritesNothingIntoAnObjectItsSuccessorTookOver) {
  const std::string image = UniqueImage("stalled-adopted");
  constexpr uint64_t kHalf = kSegmentBytes / 2;
  const std::string front = Random(kHalf, 19);
  ScriptedSegment hung;
  hung.Commit(1, {{0, kHalf}}, 0, front);
  auto first = OpenDrained(image, &hung);
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  // Both go on writing the segment, with other bytes after its first half.
  ScriptedSegment successor;
  const std::string successor_back = Random(kHalf, 20);
  successor.Commit(1, {{0, kHalf}}, 0, front);
  successor.Commit(1, {{0, kSegmentBytes}}, kHalf, successor_back);
  testing::Successor second(this, image, &successor);
  hung.StallAt(kHalf, [&] { second.TakeOver(); });
  hung.Commit(1, {{0, kSegmentBytes}}, kHalf, Random(kHalf, 21));
  Status woke = (*first)->DrainUntil(0, std::chrono::seconds(60));
  ASSERT_TRUE(second.drained.ok()) << second.drained.ToString();
  EXPECT_EQ(second.drainer->Stats().adopted_bytes, kHalf);
  EXPECT_EQ(second.drainer->Stats().uploaded_bytes, kHalf);
  EXPECT_FALSE(woke.ok());
  EXPECT_TRUE((*first)->Stats().fenced);
  EXPECT_EQ((*first)->Stats().uploaded_bytes, kHalf);  // nothing arrived since it stalled
  EXPECT_TRUE(ReadBack(second.drainer.get(), 1) == front + successor_back)
      << "the stalled writer sent the rest of its cycle over its successor's bytes";
  (*first)->Stop();
  second.drainer->Stop();
}

// An object a dead writer left under the next id is not written into: the
// writer that finds it there takes another id. And a writer whose lock was
// broken, idle when it wakes with garbage due (that object, which its
// listing found), removes nothing once another has opened the image.
TEST_P(DrainerTest, ALeftoverObjectKeepsItsIdAndAWriterWhoseLockWasBrokenRemovesNothing) {
  const std::string image = UniqueImage("gc-claimed");
  // Left by a writer that died before it named it: the next id after the
  // first writer's first object.
  const std::string leftover = ImageManifest::ObjectName(kSegment, 2);
  {
    auto admin = OpenImage(image);
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    ASSERT_TRUE((*admin)->WriteWhole(leftover, "left over").ok());
  }
  ScriptedSegment hung;
  hung.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 15));
  DrainOptions soon;
  soon.gc_delay = std::chrono::seconds(2);
  auto first = OpenDrainer(image, &hung, soon);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // Its first object is id 1; the listing after its first publication puts
  // the leftover in its garbage.
  ASSERT_TRUE((*first)->DrainUntil(0, std::chrono::seconds(60)).ok());
  ASSERT_TRUE((*first)->Published(kSegment, 1).has_value());
  ASSERT_EQ((*first)->Published(kSegment, 1)->object, 1u);
  const auto listed_by = std::chrono::steady_clock::now();

  BreakWriterLock(image);
  ScriptedSegment successor;
  const std::string successor_bytes = Random(kSegmentBytes, 16);
  // Two commits: a newer one than the image holds (lsn 1).
  for (int commit = 0; commit < 2; ++commit) successor.Commit(2, {{0, kSegmentBytes}}, 0, successor_bytes);
  auto second = OpenDrained(image, &successor);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_TRUE((*second)->Published(kSegment, 2).has_value());
  // Its next id (2, from the manifest) was the leftover's: its own object
  // has the first id past every object there.
  EXPECT_EQ((*second)->Published(kSegment, 2)->object, 3u);
  {
    auto admin = OpenImage(image);
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    auto kept = (*admin)->ReadWhole(leftover);
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    EXPECT_EQ(*kept, "left over");
  }

  // The first wakes once its garbage is due, with nothing to send.
  std::this_thread::sleep_until(listed_by + soon.gc_delay + std::chrono::milliseconds(200));
  (*first)->Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(*first)->Stats().fenced && (*first)->Stats().objects_removed == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE((*first)->Stats().fenced);
  EXPECT_EQ((*first)->Stats().objects_removed, 0u);
  EXPECT_TRUE(ReadBack(second->get(), 2) == successor_bytes);
  (*first)->Stop();
  (*second)->Stop();
}

// Objects left under the ids the writer hands out first (by a daemon
// killed after making them, before naming them; some name it, some no
// owner) are neither written into nor kept: the segment gets the next id
// past them, and they go with the garbage, all of them, more than one
// batch of RADOS calls takes.
TEST_P(DrainerTest, ObjectsLeftUnderIdsTheWriterHandsOutAreAllRemovedAndItsOwnStays) {
  const std::string image = UniqueImage("many-leftovers");
  const uint64_t leftovers = 2 * RadosImage::kBatchWindow + 22;
  {
    auto admin = OpenImage(image);
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    for (uint64_t id = 1; id <= leftovers; ++id) {
      const std::string oid = ImageManifest::ObjectName(kSegment, id);
      Status made = id % 2 ? (*admin)->WriteWhole(oid, "left over")
                           : (*admin)->Claim(oid, ImageManifest::kOwnerXattr, "a dead writer");
      ASSERT_TRUE(made.ok()) << made.ToString();
    }
  }
  ScriptedSegment source;
  const std::string bytes = Random(kSegmentBytes, 23);
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  DrainOptions now;
  now.gc_delay = std::chrono::seconds(0);
  auto opened = OpenDrainer(image, &source, now);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Drainer& drainer = **opened;
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  ASSERT_TRUE(drainer.Published(kSegment, 1).has_value());
  const uint64_t own = drainer.Published(kSegment, 1)->object;
  EXPECT_EQ(own, leftovers + 1);
  // The next cycle collects them.
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  EXPECT_EQ(SegmentObjects(image), (std::vector<std::string>{ImageManifest::ObjectName(kSegment, own)}));
  EXPECT_EQ(drainer.Stats().objects_removed, leftovers);
  EXPECT_TRUE(ReadBack(&drainer, 1) == bytes);
  drainer.Stop();
}

// An idle writer whose image was taken over finds out without sending or
// removing anything, and offers the store no evictions to that image.
TEST_P(DrainerTest, AnIdleWriterWhoseImageWasTakenOverFindsOut) {
  const std::string image = UniqueImage("idle-claimed");
  ScriptedSegment idle;
  idle.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 23));
  DrainOptions often;
  often.idle_claim_check = std::chrono::milliseconds(200);
  auto first = OpenDrained(image, &idle, often);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE((*first)->Published(kSegment, 1).has_value());
  (*first)->Start();

  BreakWriterLock(image);
  ScriptedSegment successor;
  auto second = OpenDrainer(image, &successor);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(*first)->Stats().fenced && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE((*first)->Stats().fenced);
  EXPECT_FALSE((*first)->Published(kSegment, 1).has_value());
  (*first)->Stop();
  (*second)->Stop();
}

// Another store's image is refused before it is claimed or kept locked: the
// image's own writer, whose lock was broken while it was only hung, goes on.
TEST_P(DrainerTest, AnotherStoresImageIsRefusedWithoutClaimingItOrKeepingItsLock) {
  const std::string image = UniqueImage("other-store");
  ScriptedSegment hung;
  hung.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 17));
  auto first = OpenDrained(image, &hung);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  BreakWriterLock(image);

  ScriptedSegment other;
  auto refused = OpenDrainer(image, &other, {}, kStoreId + 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kInvalid) << refused.status().ToString();
  EXPECT_NE(refused.status().ToString().find("another store"), std::string::npos) << refused.status().ToString();
  auto admin = OpenImage(image);
  ASSERT_TRUE(admin.ok()) << admin.status().ToString();
  auto lockers = (*admin)->Lockers(ImageManifest::kLockObject, ImageManifest::kLockName);
  ASSERT_TRUE(lockers.ok()) << lockers.status().ToString();
  EXPECT_TRUE(lockers->empty()) << "the refused open kept the writer lock";

  const std::string newer = Random(kSegmentBytes, 18);
  hung.Commit(2, {{0, kSegmentBytes}}, 0, newer);
  Status woke = (*first)->DrainUntil(0, std::chrono::seconds(60));
  EXPECT_TRUE(woke.ok()) << woke.ToString();
  EXPECT_FALSE((*first)->Stats().fenced);
  EXPECT_TRUE(ReadBack(first->get(), 2) == newer);
  (*first)->Stop();
}

TEST_P(DrainerTest, AnObjectSentToButNeverPublishedIsRemovedWithoutWaitingForARestart) {
  const std::string image = UniqueImage("unpublished");
  ScriptedSegment source;
  DrainOptions options;
  options.gc_delay = std::chrono::seconds(0);
  auto opened = OpenDrainer(image, &source, options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Drainer& drainer = **opened;
  // A first use, drained and published; the image is listed once then.
  source.Commit(1, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 4));
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  // A second use, handed out again while the drain reads it: its object
  // gets chunks and is never published.
  source.Commit(3, {{0, kSegmentBytes}}, 0, Random(kSegmentBytes, 5));
  const std::string last_bytes = Random(2 << 20, 6);
  source.HandOutAgainAfter(2, 4, last_bytes);
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  EXPECT_GE(drainer.Stats().retries, 1u);
  // One more cycle collects what the last one let go of.
  source.Commit(4, {{0, 2 << 20}}, 0, last_bytes);
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  std::optional<RemoteSegment> held = drainer.Published(kSegment, 4);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(SegmentObjects(image),
            (std::vector<std::string>{ImageManifest::ObjectName(kSegment, held->object)}));
  drainer.Stop();
}

TEST_P(DrainerTest, AWaitForANewerImageEndsAtOnceForOnePublishedSinceItsCountWasTaken) {
  const std::string image = UniqueImage("newer");
  ScriptedSegment source;
  auto opened = OpenDrainer(image, &source);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Drainer& drainer = **opened;
  const uint64_t seen = drainer.ImageSeq();
  EXPECT_FALSE(drainer.WaitForNewerImage(seen, std::chrono::milliseconds(50)));
  // Published between the count and the wait, as it can be while a full
  // store looks for something to evict.
  source.Commit(1, {{0, 2 << 20}}, 0, Random(2 << 20, 7));
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  ASSERT_GT(drainer.ImageSeq(), seen);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(drainer.WaitForNewerImage(seen, std::chrono::seconds(30)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_FALSE(drainer.WaitForNewerImage(drainer.ImageSeq(), std::chrono::milliseconds(50)));
  drainer.Stop();
}

}  // namespace
}  // namespace ckptfs
