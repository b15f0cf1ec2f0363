// SegmentTable: allocation order and reserves, promises to compressed writes,
// live-byte accounting through the SpaceObserver calls, segments freed only
// once the record that emptied them is durable, sparse-store provisioning,
// replay and the cleaner's view.
#include "segment/segment_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

namespace ckptfs {
namespace {

constexpr uint64_t kSegmentSize = 2 << 20;
// 16 segments: the metadata reserve and the cleaner reserve are 2 each.
constexpr uint32_t kSegments = 16;
constexpr uint32_t kReserved = 4;

Superblock MakeSuperblock() {
  Superblock sb;
  sb.segment_size = kSegmentSize;
  sb.segment_count = kSegments;
  sb.device_size = kDataStart + kSegments * kSegmentSize;
  return sb;
}

// A raw run of `length` bytes `offset` bytes into `segment`.
PhysicalExtent Raw(uint32_t segment, uint64_t offset, uint32_t length) {
  PhysicalExtent e;
  e.addr = kDataStart + segment * kSegmentSize + offset;
  e.length = length;
  return e;
}

// A compressed run: `stored` bytes on the device that decode to `raw`.
PhysicalExtent Compressed(uint32_t segment, uint64_t offset, uint32_t stored, uint32_t raw) {
  PhysicalExtent e = Raw(segment, offset, stored);
  e.codec = 1;
  e.raw_length = raw;
  return e;
}

// Every segment the metadata log can still get.
std::set<uint32_t> AllMeta(SegmentTable* table) {
  std::set<uint32_t> out;
  for (auto s = table->AllocateMeta(); s.ok(); s = table->AllocateMeta()) out.insert(*s);
  return out;
}

class SegmentTableTest : public ::testing::Test {
 protected:
  SegmentTableTest() : sb_(MakeSuperblock()), table_(sb_) { table_.FinishReplay({0}); }

  // A data segment holding `bytes` live bytes, written out (not buffered).
  uint32_t WrittenSegment(uint32_t bytes) {
    auto s = table_.AllocateData();
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    table_.Referenced(Raw(*s, 0, bytes), 0, bytes);
    table_.Deactivate(*s);
    return *s;
  }

  // Allocates for `who` until NoSpace; returns how many it got.
  uint32_t AllocateAll(SegmentTable::Requester who) {
    uint32_t n = 0;
    while (true) {
      auto s = table_.AllocateData(who);
      if (!s.ok()) {
        EXPECT_TRUE(s.status().IsNoSpace()) << s.status().ToString();
        return n;
      }
      ++n;
    }
  }

  Superblock sb_;
  SegmentTable table_;
};

TEST_F(SegmentTableTest, FreshTableHasTheLogSegmentAndReserves) {
  SegmentUsage u = table_.Usage();
  EXPECT_EQ(u.total, kSegments);
  EXPECT_EQ(u.meta, 1u);
  EXPECT_EQ(u.free, kSegments - 1);
  EXPECT_EQ(u.data, 0u);
  EXPECT_EQ(u.reserved, kReserved);
  EXPECT_EQ(u.meta_reserved, 2u);
  EXPECT_EQ(u.live_bytes, 0u);
  EXPECT_EQ(table_.segment_size(), kSegmentSize);
}

TEST_F(SegmentTableTest, AllocationWalksForwardAndWrapsAround) {
  std::vector<uint32_t> got;
  for (int i = 0; i < 3; ++i) got.push_back(*table_.AllocateData());
  EXPECT_EQ(got, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(*table_.AllocateMeta(), 4u);

  // Segment 1 dies and is freed; allocation still continues forward first.
  table_.Deactivate(1);
  table_.CommitDurable(0);
  EXPECT_EQ(table_.Usage().free, kSegments - 4);
  EXPECT_EQ(*table_.AllocateData(), 5u);
  // Fill the rest of the table (the cleaner may go down to the metadata
  // reserve): the walk wraps and takes 1 again.
  const std::set<uint32_t> rest = AllMeta(&table_);
  EXPECT_TRUE(rest.count(1));
  EXPECT_FALSE(rest.count(0));
  EXPECT_EQ(table_.Usage().free, 0u);
}

TEST_F(SegmentTableTest, SegmentOfMapsAddressesToSegments) {
  EXPECT_EQ(table_.SegmentOf(kDataStart), 0u);
  EXPECT_EQ(table_.SegmentOf(kDataStart + kSegmentSize - 1), 0u);
  EXPECT_EQ(table_.SegmentOf(kDataStart + 5 * kSegmentSize + 4096), 5u);
}

TEST_F(SegmentTableTest, EachRequesterStopsAtItsReserve) {
  const uint32_t free = kSegments - 1;
  // User writes leave both reserves.
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kUser), free - kReserved);
  // So do compressors (nothing is promised to them now).
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kPromised), 0u);
  // The cleaner may take its own reserve, not the metadata log's.
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kCleaner), 2u);
  // The metadata log may take everything.
  EXPECT_TRUE(table_.AllocateMeta().ok());
  EXPECT_TRUE(table_.AllocateMeta().ok());
  auto none = table_.AllocateMeta();
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(none.status().IsNoSpace());
  EXPECT_EQ(table_.Usage().free, 0u);
}

TEST_F(SegmentTableTest, FreeMetaReturnsOnlyMetadataSegments) {
  uint32_t meta = *table_.AllocateMeta();
  uint32_t data = *table_.AllocateData();
  const uint32_t before = table_.Usage().free;
  table_.FreeMeta({meta, data});  // `data` is not the log's: left alone
  SegmentUsage u = table_.Usage();
  EXPECT_EQ(u.free, before + 1);
  EXPECT_EQ(u.data, 1u);
  EXPECT_EQ(u.meta, 1u);  // segment 0 from replay
  table_.FreeMeta({meta});  // twice is harmless
  EXPECT_EQ(table_.Usage().free, before + 1);
}

TEST_F(SegmentTableTest, PendingReservationKeepsRoomFromUserWrites) {
  // 1 MiB promised holds one segment for the bytes and one more in case the
  // run does not fit the open buffer's rest.
  ASSERT_TRUE(table_.ReservePending(1 << 20).ok());
  EXPECT_EQ(table_.Usage().pending_reserved_bytes, 1u << 20);
  const uint32_t free = kSegments - 1;
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kUser), free - kReserved - 2);
  // What was promised is there for the compressor.
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kPromised), 2u);
}

TEST_F(SegmentTableTest, FallocatedSpaceIsPromisedToTheWritesIntoIt) {
  // Reserved extents are referenced like data, but hold room, not bytes.
  const PhysicalExtent reserved = PhysicalExtent::Reserved();
  table_.Referenced(reserved, 0, kSegmentSize + 4096);
  EXPECT_EQ(table_.Usage().fallocated_bytes, kSegmentSize + 4096);
  EXPECT_EQ(table_.Usage().live_bytes, 0u);
  // Another promise fails once it would eat into the reservation.
  EXPECT_TRUE(table_.ReservePending((kSegments - 1 - kReserved - 2) * kSegmentSize).IsNoSpace());
  const uint32_t free = kSegments - 1;
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kUser), free - kReserved - 3);
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kPromised), 3u);
  table_.Released(reserved, 0, kSegmentSize + 4096);
  EXPECT_EQ(table_.Usage().fallocated_bytes, 0u);
}

TEST_F(SegmentTableTest, PromisableBytesIsWhatReservePendingGrants) {
  table_.Referenced(PhysicalExtent::Reserved(), 0, 4096);
  const uint64_t promisable = table_.PromisableBytes();
  EXPECT_TRUE(table_.ReservePending(promisable + 1).IsNoSpace());
  EXPECT_TRUE(table_.ReservePending(promisable).ok());
  EXPECT_EQ(table_.PromisableBytes(), 0u);
}

TEST_F(SegmentTableTest, ReleasedReservationGoesBackToUserWrites) {
  ASSERT_TRUE(table_.ReservePending(1 << 20).ok());
  const uint32_t free = kSegments - 1;
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kUser), free - kReserved - 2);
  table_.ReleasePending(1 << 20);
  EXPECT_EQ(table_.Usage().pending_reserved_bytes, 0u);
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kUser), 2u);
  // Releasing more than is promised leaves nothing negative behind.
  table_.ReleasePending(1 << 20);
  EXPECT_EQ(table_.Usage().pending_reserved_bytes, 0u);
}

TEST_F(SegmentTableTest, ReservationsAddUp) {
  ASSERT_TRUE(table_.ReservePending(kSegmentSize).ok());
  ASSERT_TRUE(table_.ReservePending(kSegmentSize).ok());
  EXPECT_EQ(table_.Usage().pending_reserved_bytes, 2 * kSegmentSize);
  // Two segments' worth of bytes plus the spare one.
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kUser), kSegments - 1 - kReserved - 3);
  table_.ReleasePending(kSegmentSize);
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kUser), 1u);
}

TEST_F(SegmentTableTest, ReservationBeyondTheFreeSegmentsIsRefused) {
  // Leave the reserves plus one segment: too little for any promise.
  const uint32_t free = kSegments - 1;
  for (uint32_t i = 0; i < free - kReserved - 1; ++i) ASSERT_TRUE(table_.AllocateData().ok());
  Status s = table_.ReservePending(4096);
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_EQ(table_.Usage().pending_reserved_bytes, 0u);  // a refusal promises nothing
  // One more free segment and the same promise fits.
  table_.Deactivate(1);
  table_.CommitDurable(0);
  EXPECT_TRUE(table_.ReservePending(4096).ok());
  EXPECT_EQ(table_.Usage().pending_reserved_bytes, 4096u);
  // ...and the promised room is not the user's any more.
  EXPECT_EQ(AllocateAll(SegmentTable::Requester::kUser), 0u);
}

TEST_F(SegmentTableTest, RawReferencesCountLiveBytes) {
  uint32_t s = *table_.AllocateData();
  table_.Referenced(Raw(s, 0, 8192), 0, 8192);
  table_.Referenced(Raw(s, 8192, 4096), 0, 4096);
  SegmentUsage u = table_.Usage();
  EXPECT_EQ(u.live_bytes, 12288u);
  EXPECT_EQ(u.live_file_bytes, 12288u);
  table_.Released(Raw(s, 0, 8192), 0, 4096);  // half of the first run dies
  u = table_.Usage();
  EXPECT_EQ(u.live_bytes, 8192u);
  EXPECT_EQ(u.live_file_bytes, 8192u);
  // Releasing more than is live clamps at zero.
  table_.Released(Raw(s, 0, 8192), 0, 1 << 20);
  EXPECT_EQ(table_.Usage().live_bytes, 0u);
}

// A copy sharing a raw run's bytes (copy_file_range) adds file bytes, not
// live ones; the segment lives until the last reference goes.
TEST_F(SegmentTableTest, SharedRawBytesAreLiveOnce) {
  uint32_t s = *table_.AllocateData();
  table_.Deactivate(s);
  const PhysicalExtent run = Raw(s, 0, 1 << 20);
  table_.Referenced(run, 0, 1 << 20);
  table_.Referenced(run, 4096, 8192);  // a copy of part of it
  SegmentUsage u = table_.Usage();
  EXPECT_EQ(u.live_bytes, 1u << 20);
  EXPECT_EQ(u.live_file_bytes, (1u << 20) + 8192);
  EXPECT_EQ(u.shared_bytes, 8192u);
  table_.Released(run, 0, 1 << 20);  // the original is deleted
  u = table_.Usage();
  EXPECT_EQ(u.live_bytes, 8192u);
  EXPECT_EQ(u.pending_free, 0u);
  table_.Released(run, 4096, 8192);  // then the copy
  u = table_.Usage();
  EXPECT_EQ(u.live_bytes, 0u);
  EXPECT_EQ(u.pending_free, 1u);
}

TEST_F(SegmentTableTest, CompressedRunIsLiveWholeWhileAnyByteIsReferenced) {
  uint32_t s = *table_.AllocateData();
  const PhysicalExtent run = Compressed(s, 0, 4096, 16384);
  table_.Referenced(run, 0, 8192);
  table_.Referenced(run, 0, 8192);  // a second extent into the same run
  SegmentUsage u = table_.Usage();
  EXPECT_EQ(u.live_bytes, 4096u);  // the stored run, once
  EXPECT_EQ(u.live_file_bytes, 16384u);
  EXPECT_EQ(table_.CompressedRunRefs(run), 16384u);

  table_.Released(run, 0, 8192);
  EXPECT_EQ(table_.Usage().live_bytes, 4096u);  // still referenced: still whole
  EXPECT_EQ(table_.CompressedRunRefs(run), 8192u);
  table_.Released(run, 0, 8192);
  u = table_.Usage();
  EXPECT_EQ(u.live_bytes, 0u);
  EXPECT_EQ(u.live_file_bytes, 0u);
  EXPECT_EQ(table_.CompressedRunRefs(run), 0u);
}

TEST_F(SegmentTableTest, RemoteRunsCountTowardsTheirTierObjectUntilTheirEndIsCommitted) {
  // A segment's run, evicted: its mapping moves to object 9 of the tier.
  const uint32_t s = WrittenSegment(8192);
  PhysicalExtent remote = Raw(s, 0, 8192);
  remote.addr = PhysicalExtent::RemoteAddress(9, 0);
  table_.NoteRecord(1);
  table_.Referenced(remote, 0, 8192);
  table_.Released(Raw(s, 0, 8192), 0, 8192);
  SegmentUsage u = table_.Usage();
  EXPECT_EQ(u.live_bytes, 0u);  // the device holds none of it
  EXPECT_EQ(u.remote_objects, 1u);
  EXPECT_EQ(u.remote_live_bytes, 8192u);
  EXPECT_EQ(u.remote_file_bytes, 8192u);
  EXPECT_EQ(table_.RemoteObjectsInUse(), std::vector<uint64_t>{9});
  table_.CommitDurable(1);
  // The segment is free for reuse; the object stays in use.
  EXPECT_EQ(table_.DataSegmentsInUse(), std::vector<uint32_t>{});
  EXPECT_EQ(table_.RemoteObjectsInUse(), std::vector<uint64_t>{9});

  // Its last reference released (the file deleted): still in use until the
  // record that released it is durable, since the last commit points at it.
  table_.NoteRecord(2);
  table_.Released(remote, 0, 8192);
  EXPECT_EQ(table_.Usage().remote_objects, 0u);
  EXPECT_EQ(table_.RemoteObjectsInUse(), std::vector<uint64_t>{9});
  table_.CommitDurable(1);
  EXPECT_EQ(table_.RemoteObjectsInUse(), std::vector<uint64_t>{9});
  table_.CommitDurable(2);
  EXPECT_EQ(table_.RemoteObjectsInUse(), std::vector<uint64_t>{});
}

TEST_F(SegmentTableTest, PendingRunsAreNotAccounted) {
  PhysicalExtent pending;
  pending.addr = PhysicalExtent::kPendingBit | 7;
  pending.length = 4096;
  table_.Referenced(pending, 0, 4096);
  EXPECT_EQ(table_.Usage().live_file_bytes, 0u);
  table_.Released(pending, 0, 4096);
  EXPECT_EQ(table_.PendingFree(), 0u);
}

TEST_F(SegmentTableTest, EmptiedSegmentIsFreedOnlyWhenItsRecordIsDurable) {
  uint32_t s = WrittenSegment(8192);
  const uint32_t free = table_.Usage().free;
  table_.NoteRecord(7);
  table_.Released(Raw(s, 0, 8192), 0, 8192);
  EXPECT_EQ(table_.PendingFree(), 1u);
  SegmentUsage u = table_.Usage();
  EXPECT_EQ(u.pending_free, 1u);
  EXPECT_EQ(u.free, free);  // not reusable yet
  EXPECT_EQ(u.data, 1u);

  table_.CommitDurable(6);  // a commit that stopped before record 7
  EXPECT_EQ(table_.PendingFree(), 1u);
  EXPECT_EQ(table_.Usage().free, free);

  table_.CommitDurable(7);
  EXPECT_EQ(table_.PendingFree(), 0u);
  u = table_.Usage();
  EXPECT_EQ(u.free, free + 1);
  EXPECT_EQ(u.data, 0u);
  EXPECT_EQ(u.pending_free, 0u);
}

TEST_F(SegmentTableTest, CommittedDeadSegmentWaitsForReadsPinnedBeforeTheCommit) {
  uint32_t s = WrittenSegment(8192);
  const uint32_t free = table_.Usage().free;
  // A read looked up extents into `s` and is still reading them.
  ReadPins::Pin early = table_.PinForRead();
  table_.NoteRecord(3);
  table_.Released(Raw(s, 0, 8192), 0, 8192);
  table_.CommitDurable(3);
  // Committed: no commit needed any more, but not reusable while the read runs.
  EXPECT_EQ(table_.PendingFree(), 0u);
  EXPECT_EQ(table_.Usage().free, free);
  EXPECT_EQ(table_.Usage().pending_free, 1u);
  // A read that starts after the commit cannot see `s` and does not hold it.
  ReadPins::Pin late = table_.PinForRead();
  early.Release();
  // The next allocation finds it free again.
  auto next = table_.AllocateData();
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(table_.Usage().pending_free, 0u);
  EXPECT_EQ(table_.Usage().free, free);  // one back, one taken
  std::set<uint32_t> taken = AllMeta(&table_);
  taken.insert(*next);
  EXPECT_TRUE(taken.count(s)) << "segment " << s << " never came back";
}

TEST_F(SegmentTableTest, PinnedReadKeepsItsSegmentFromEveryAllocation) {
  uint32_t s = WrittenSegment(4096);
  ReadPins::Pin pin = table_.PinForRead();
  table_.NoteRecord(1);
  table_.Released(Raw(s, 0, 4096), 0, 4096);
  table_.CommitDurable(1);
  std::set<uint32_t> taken;
  for (auto more = table_.AllocateData(SegmentTable::Requester::kCleaner); more.ok();
       more = table_.AllocateData(SegmentTable::Requester::kCleaner)) {
    taken.insert(*more);
  }
  for (uint32_t m : AllMeta(&table_)) taken.insert(m);
  EXPECT_FALSE(taken.count(s)) << "segment " << s << " was reused under a pinned read";
}

TEST_F(SegmentTableTest, SegmentsRememberTheRecordTheyDiedBy) {
  uint32_t a = WrittenSegment(4096);
  uint32_t b = WrittenSegment(4096);
  table_.NoteRecord(3);
  table_.Released(Raw(a, 0, 4096), 0, 4096);
  table_.NoteRecord(5);
  table_.Released(Raw(b, 0, 4096), 0, 4096);
  EXPECT_EQ(table_.PendingFree(), 2u);
  table_.CommitDurable(4);
  EXPECT_EQ(table_.PendingFree(), 1u);
  // `a` is reusable, `b` is not.
  const std::set<uint32_t> taken = AllMeta(&table_);
  EXPECT_TRUE(taken.count(a));
  EXPECT_FALSE(taken.count(b));
}

TEST_F(SegmentTableTest, BufferedSegmentIsNeverFreed) {
  uint32_t s = *table_.AllocateData();  // active: the data log still buffers it
  table_.NoteRecord(2);
  table_.Referenced(Raw(s, 0, 4096), 0, 4096);
  table_.Released(Raw(s, 0, 4096), 0, 4096);
  EXPECT_EQ(table_.PendingFree(), 0u);
  table_.CommitDurable(100);
  EXPECT_EQ(table_.Usage().data, 1u);

  // Once the data log lets go, it dies by the record applying now.
  table_.NoteRecord(9);
  table_.Deactivate(s);
  EXPECT_EQ(table_.PendingFree(), 1u);
  table_.CommitDurable(8);
  EXPECT_EQ(table_.Usage().data, 1u);
  table_.CommitDurable(9);
  EXPECT_EQ(table_.Usage().data, 0u);
  EXPECT_EQ(table_.PendingFree(), 0u);
}

TEST_F(SegmentTableTest, ANewReferenceRevivesASegmentWaitingToBeFreed) {
  uint32_t s = WrittenSegment(4096);
  table_.NoteRecord(4);
  table_.Released(Raw(s, 0, 4096), 0, 4096);
  ASSERT_EQ(table_.PendingFree(), 1u);
  table_.Referenced(Raw(s, 4096, 4096), 0, 4096);
  EXPECT_EQ(table_.PendingFree(), 0u);
  EXPECT_EQ(table_.Usage().pending_free, 0u);
  table_.CommitDurable(10);
  EXPECT_EQ(table_.Usage().data, 1u);
  EXPECT_EQ(table_.Usage().live_bytes, 4096u);
}

TEST_F(SegmentTableTest, CleaningCandidatesAreWrittenDataSegmentsWithTheirAge) {
  auto a = table_.AllocateData(SegmentTable::Requester::kUser);
  auto b = table_.AllocateData(SegmentTable::Requester::kCleaner);
  auto c = table_.AllocateData(SegmentTable::Requester::kUser);  // stays buffered
  auto d = table_.AllocateData(SegmentTable::Requester::kUser);  // dies
  auto m = table_.AllocateMeta();
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok() && m.ok());
  table_.Referenced(Raw(*a, 0, 8192), 0, 8192);
  table_.Referenced(Raw(*b, 0, 4096), 0, 4096);
  table_.Referenced(Raw(*c, 0, 4096), 0, 4096);
  table_.Deactivate(*a);
  table_.Deactivate(*b);
  table_.Deactivate(*d);  // no live byte: waits to be freed, nothing to clean

  std::vector<SegmentSummary> got = table_.CleaningCandidates();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].segment, *a);
  EXPECT_EQ(got[0].live_bytes, 8192u);
  EXPECT_EQ(got[0].age, 2u);  // two segments were written out after it
  EXPECT_FALSE(got[0].by_cleaner);
  EXPECT_EQ(got[1].segment, *b);
  EXPECT_EQ(got[1].live_bytes, 4096u);
  EXPECT_EQ(got[1].age, 1u);
  EXPECT_TRUE(got[1].by_cleaner);
}

TEST(SegmentTableReplay, FinishReplayKeepsReferencedSegmentsAndFreesTheRest) {
  const Superblock sb = MakeSuperblock();
  SegmentTable table(sb);
  // Replay: references come and go before any state is known.
  table.Referenced(Raw(3, 0, 8192), 0, 8192);
  table.Referenced(Raw(5, 0, 4096), 0, 4096);
  table.Referenced(Raw(7, 0, 4096), 0, 4096);
  table.Released(Raw(5, 0, 4096), 0, 4096);
  table.FinishReplay({0, 1});

  SegmentUsage u = table.Usage();
  EXPECT_EQ(u.meta, 2u);
  EXPECT_EQ(u.data, 2u);  // 3 and 7; 5 died during replay and is free at once
  EXPECT_EQ(u.free, kSegments - 4);
  EXPECT_EQ(u.pending_free, 0u);
  EXPECT_EQ(u.live_bytes, 12288u);
  EXPECT_EQ(table.PendingFree(), 0u);

  std::vector<SegmentSummary> candidates = table.CleaningCandidates();
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].segment, 3u);
  EXPECT_EQ(candidates[1].segment, 7u);
  // Allocation continues after the last segment in use.
  EXPECT_EQ(*table.AllocateData(), 8u);
  // A replayed segment still dies by its record.
  table.NoteRecord(2);
  table.Released(Raw(3, 0, 8192), 0, 8192);
  EXPECT_EQ(table.PendingFree(), 1u);
  table.CommitDurable(2);
  EXPECT_EQ(table.Usage().data, 2u);  // 7 and the new one
}

TEST(SegmentTableProvision, SegmentWithNoRoomUnderItIsSkipped) {
  const Superblock sb = MakeSuperblock();
  std::vector<uint32_t> asked;
  SegmentTable table(sb, [&](uint32_t s) -> Status {
    asked.push_back(s);
    return s == 1 || s == 2 ? Status::NoSpace("backing file system full") : Status::Ok();
  });
  table.FinishReplay({0});
  EXPECT_EQ(*table.AllocateData(), 3u);
  EXPECT_EQ(asked, (std::vector<uint32_t>{1, 2, 3}));
  // Marked segments are not asked again (within the retry interval), not
  // even by the metadata log.
  asked.clear();
  const std::set<uint32_t> taken = AllMeta(&table);
  EXPECT_FALSE(taken.count(1));
  EXPECT_FALSE(taken.count(2));
  EXPECT_EQ(taken.size(), kSegments - 4u);
  EXPECT_EQ(std::count(asked.begin(), asked.end(), 1u), 0);
  EXPECT_EQ(std::count(asked.begin(), asked.end(), 2u), 0);
}

TEST(SegmentTableProvision, UnprovisionedSegmentsDoNotCountAsFree) {
  const Superblock sb = MakeSuperblock();
  // The file system under the store has room for segments up to 8 only.
  SegmentTable table(sb, [](uint32_t s) -> Status {
    return s <= 8 ? Status::Ok() : Status::NoSpace("backing file system full");
  });
  table.FinishReplay({0});
  uint32_t got = 0;
  Status last;
  while (true) {
    auto s = table.AllocateData();
    if (!s.ok()) {
      last = s.status();
      break;
    }
    ++got;
  }
  // 1 to 8, then 9, 10 and 11 are found unprovisioned, which leaves 4 usable
  // segments (12 to 15, not asked yet): the reserves, not the user's.
  EXPECT_EQ(got, 8u);
  EXPECT_TRUE(last.IsNoSpace());
  EXPECT_NE(last.message().find("no room under the sparse store"), std::string::npos)
      << last.message();
  EXPECT_EQ(table.Usage().free, 7u);  // free, but 3 of them unusable
  // Nor can room be promised to a compressed write out of the unusable
  // segments: placing it would find none after its write was acknowledged.
  Status promise = table.ReservePending(4096);
  EXPECT_TRUE(promise.IsNoSpace()) << promise.ToString();
  EXPECT_EQ(table.Usage().pending_reserved_bytes, 0u);
}

TEST(SegmentTableProvision, OtherProvisioningErrorsFailTheAllocation) {
  const Superblock sb = MakeSuperblock();
  int calls = 0;
  SegmentTable table(sb, [&](uint32_t s) -> Status {
    ++calls;
    return calls == 1 ? Status::IOError("fallocate: EIO") : Status::Ok();
  });
  table.FinishReplay({0});
  auto first = table.AllocateData();
  ASSERT_FALSE(first.ok());
  EXPECT_TRUE(first.status().IsIOError()) << first.status().ToString();
  // Not marked: the same segment is asked again and taken.
  EXPECT_EQ(*table.AllocateData(), 1u);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(table.Usage().free, kSegments - 2);
}

}  // namespace
}  // namespace ckptfs
