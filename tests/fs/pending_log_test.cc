// PendingLog: records and reserved places are numbered in the order they were
// applied, and a commit takes only the prefix up to the first place still
// waiting for its compressor.
#include "log/pending_log.h"

#include <gtest/gtest.h>

#include <string>

namespace ckptfs {
namespace {

// A record that is easy to tell apart by its `size` field.
Record Truncate(uint64_t size) { return record::Truncate{1, size, 0}; }

std::string Encoded(const Record& r) {
  std::string out;
  EncodeRecord(r, &out);
  return out;
}

TEST(PendingLog, EmptyLogHasNothingToTake) {
  PendingLog log;
  EXPECT_EQ(log.next_seq(), 1u);
  EXPECT_EQ(log.last_seq(), 0u);
  EXPECT_EQ(log.ready_seq(), 0u);
  EXPECT_EQ(log.ready_bytes(), 0u);
  EXPECT_FALSE(log.has_reserved());
  std::string out = "kept";
  EXPECT_EQ(log.TakeReady(&out), 0u);
  EXPECT_EQ(out, "kept");
}

TEST(PendingLog, AppendedRecordsAreTakenInOrderOnce) {
  PendingLog log;
  EXPECT_EQ(log.Append(Truncate(10)), 1u);
  EXPECT_EQ(log.Append(Truncate(20)), 2u);
  EXPECT_EQ(log.next_seq(), 3u);
  EXPECT_EQ(log.last_seq(), 2u);
  EXPECT_EQ(log.ready_seq(), 2u);
  const std::string expected = Encoded(Truncate(10)) + Encoded(Truncate(20));
  EXPECT_EQ(log.ready_bytes(), expected.size());

  std::string out = "head:";
  EXPECT_EQ(log.TakeReady(&out), 2u);
  EXPECT_EQ(out, "head:" + expected);  // appended, not replaced
  EXPECT_EQ(log.ready_bytes(), 0u);

  // Taken records are gone; the numbering goes on.
  out.clear();
  EXPECT_EQ(log.TakeReady(&out), 2u);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(log.Append(Truncate(30)), 3u);
  EXPECT_EQ(log.TakeReady(&out), 3u);
  EXPECT_EQ(out, Encoded(Truncate(30)));
}

TEST(PendingLog, TakeReadyStopsAtTheFirstUnfilledPlace) {
  PendingLog log;
  EXPECT_EQ(log.Append(Truncate(1)), 1u);
  EXPECT_EQ(log.Reserve(/*key=*/100), 2u);
  EXPECT_EQ(log.Append(Truncate(3)), 3u);
  EXPECT_EQ(log.Reserve(/*key=*/200), 4u);
  EXPECT_EQ(log.Append(Truncate(5)), 5u);
  EXPECT_TRUE(log.has_reserved());
  EXPECT_EQ(log.ready_seq(), 1u);

  std::string out;
  EXPECT_EQ(log.TakeReady(&out), 1u);
  EXPECT_EQ(out, Encoded(Truncate(1)));

  // The later place filled first changes nothing: 100 still holds the line.
  ASSERT_TRUE(log.Fill(200, Encoded(Truncate(4))));
  EXPECT_EQ(log.ready_seq(), 1u);
  out.clear();
  EXPECT_EQ(log.TakeReady(&out), 1u);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(log.has_reserved());

  ASSERT_TRUE(log.Fill(100, Encoded(Truncate(2))));
  EXPECT_FALSE(log.has_reserved());
  EXPECT_EQ(log.ready_seq(), 5u);
  EXPECT_EQ(log.TakeReady(&out), 5u);
  EXPECT_EQ(out, Encoded(Truncate(2)) + Encoded(Truncate(3)) + Encoded(Truncate(4)) +
                     Encoded(Truncate(5)));
  EXPECT_EQ(log.ready_bytes(), 0u);
}

TEST(PendingLog, ReadyBytesCountFilledRecordsBehindAPlaceToo) {
  PendingLog log;
  log.Reserve(7);
  log.Append(Truncate(2));
  // Waiting for a commit, though no commit can take it yet.
  EXPECT_EQ(log.ready_bytes(), Encoded(Truncate(2)).size());
  ASSERT_TRUE(log.Fill(7, Encoded(Truncate(1))));
  EXPECT_EQ(log.ready_bytes(), Encoded(Truncate(1)).size() + Encoded(Truncate(2)).size());
}

TEST(PendingLog, PlaceFilledWithNothingIsPassedOver) {
  // A write that failed after reserving its place fills it with no record.
  PendingLog log;
  log.Append(Truncate(1));
  log.Reserve(9);
  log.Append(Truncate(3));
  ASSERT_TRUE(log.Fill(9, {}));
  std::string out;
  EXPECT_EQ(log.TakeReady(&out), 3u);
  EXPECT_EQ(out, Encoded(Truncate(1)) + Encoded(Truncate(3)));
}

TEST(PendingLog, RecordsAppendedAfterAFilledPlaceFollowIt) {
  PendingLog log;
  log.Reserve(1);
  ASSERT_TRUE(log.Fill(1, Encoded(Truncate(1))));
  EXPECT_EQ(log.Append(Truncate(2)), 2u);
  EXPECT_EQ(log.Reserve(1), 3u);  // the key is free again once filled
  EXPECT_EQ(log.ready_seq(), 2u);
  std::string out;
  EXPECT_EQ(log.TakeReady(&out), 2u);
  EXPECT_EQ(out, Encoded(Truncate(1)) + Encoded(Truncate(2)));
}

TEST(PendingLog, FillOfAPlaceNeverReservedIsRefused) {
  PendingLog log;
  log.Reserve(5);
  ASSERT_TRUE(log.Fill(5, Encoded(Truncate(1))));
#ifdef NDEBUG
  EXPECT_FALSE(log.Fill(5, Encoded(Truncate(1))));  // filled already
  EXPECT_FALSE(log.Fill(6, Encoded(Truncate(1))));  // never reserved
  std::string out;
  EXPECT_EQ(log.TakeReady(&out), 1u);
  EXPECT_EQ(out, Encoded(Truncate(1)));  // not filled twice
#else
  EXPECT_DEATH(log.Fill(6, {}), "never reserved");
#endif
}

}  // namespace
}  // namespace ckptfs
