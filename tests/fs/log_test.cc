// Metadata log: order, torn tails, stale blocks, chaining across segments
// and resuming after replay, all on a MemoryDevice.
#include <gtest/gtest.h>

#include "format/log_format.h"
#include "io/memory_device.h"
#include "log/log_reader.h"
#include "log/log_writer.h"
#include "log/record.h"

namespace ckptfs {
namespace {

class LogTest : public ::testing::Test {
 protected:
  LogTest() : device_(kDataStart + 16 * (2 << 20)) {
    sb_.segment_size = 2 << 20;
    sb_.segment_count = 16;
    sb_.device_size = device_.size();
    sb_.store_id = 0xfeedface;
    sb_.log_head_segment = 0;
    sb_.log_head_lsn = 1;
    sb_.log_head_prev_crc = 77;
  }

  LogWriter MakeWriter(LogPosition pos) {
    return LogWriter(&device_, sb_, pos, [this]() -> Result<uint32_t> { return next_segment_++; });
  }
  LogPosition Head() const { return {0, 0, sb_.log_head_lsn, sb_.log_head_prev_crc}; }

  static std::string Encoded(uint64_t first, uint64_t count, size_t name_len = 8) {
    std::string out;
    for (uint64_t i = first; i < first + count; ++i) {
      EncodeRecord(record::Link{1, std::string(name_len, 'n') + std::to_string(i), i, 0}, &out);
    }
    return out;
  }

  // Replays and returns the inode numbers of the Link records seen.
  std::vector<uint64_t> ReplayInos(LogReplayResult* result = nullptr) {
    std::vector<uint64_t> inos;
    LogReader reader(&device_, sb_);
    auto r = reader.Replay([&](const Record& rec) {
      inos.push_back(std::get<record::Link>(rec).ino);
      return Status::Ok();
    });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (result && r.ok()) *result = *r;
    return inos;
  }

  MemoryDevice device_;
  Superblock sb_;
  uint32_t next_segment_ = 1;
};

TEST_F(LogTest, ReplaysRecordsInOrder) {
  LogWriter w = MakeWriter(Head());
  ASSERT_TRUE(w.Append(Encoded(0, 10)).ok());
  ASSERT_TRUE(w.Append(Encoded(10, 5)).ok());
  auto inos = ReplayInos();
  ASSERT_EQ(inos.size(), 15u);
  for (uint64_t i = 0; i < 15; ++i) EXPECT_EQ(inos[i], i);
}

TEST_F(LogTest, EmptyLogReplaysNothing) {
  LogReplayResult result;
  EXPECT_TRUE(ReplayInos(&result).empty());
  EXPECT_EQ(result.end.offset, 0u);
  EXPECT_EQ(result.end.lsn, 1u);
}

TEST_F(LogTest, TornTailBlockIsDiscarded) {
  LogWriter w = MakeWriter(Head());
  ASSERT_TRUE(w.Append(Encoded(0, 3)).ok());
  uint64_t second_block = w.position().offset;
  ASSERT_TRUE(w.Append(Encoded(3, 3)).ok());
  // Damage a payload byte of the second block: its checksum no longer holds.
  device_.bytes()[sb_.SegmentOffset(0) + second_block + kLogBlockHeaderSize + 3] ^= 0x5a;
  LogReplayResult result;
  auto inos = ReplayInos(&result);
  EXPECT_EQ(inos.size(), 3u);
  EXPECT_EQ(result.end.offset, second_block);
  EXPECT_NE(result.stop_reason.find("checksum"), std::string::npos);
}

TEST_F(LogTest, DamageBeforeALaterCommitIsReported) {
  LogWriter w = MakeWriter(Head());
  ASSERT_TRUE(w.Append(Encoded(0, 3)).ok());
  uint64_t second = w.position().offset;
  ASSERT_TRUE(w.Append(Encoded(3, 3)).ok());
  ASSERT_TRUE(w.Append(Encoded(6, 3)).ok());  // a later commit, written after a flush
  device_.bytes()[sb_.SegmentOffset(0) + second + kLogBlockHeaderSize + 1] ^= 0x20;
  LogReplayResult result;
  auto inos = ReplayInos(&result);
  EXPECT_EQ(inos.size(), 3u);
  EXPECT_NE(result.damage.find("damaged at block 2"), std::string::npos) << result.damage;
}

TEST_F(LogTest, TornMultiBlockCommitIsNotDamage) {
  LogWriter w = MakeWriter(Head());
  ASSERT_TRUE(w.Append(Encoded(0, 3)).ok());
  uint64_t torn = w.position().offset;
  // One commit large enough for several blocks; its first block never landed.
  ASSERT_TRUE(w.Append(Encoded(3, 30000, 80)).ok());
  ASSERT_GT(w.position().offset - torn, kMaxLogBlockSize);
  device_.bytes()[sb_.SegmentOffset(0) + torn + kLogBlockHeaderSize + 1] ^= 0x20;
  LogReplayResult result;
  EXPECT_EQ(ReplayInos(&result).size(), 3u);
  EXPECT_TRUE(result.damage.empty()) << result.damage;
}

TEST_F(LogTest, StaleBlockWithFittingLsnIsRejected) {
  // Write blocks A, B, C; then rewind to B's position and write a shorter B'.
  // C still sits after B' with lsn B'+1, but its chain value names the old B.
  LogWriter w = MakeWriter(Head());
  ASSERT_TRUE(w.Append(Encoded(0, 1)).ok());
  LogPosition at_b = w.position();
  ASSERT_TRUE(w.Append(Encoded(1, 1)).ok());
  ASSERT_TRUE(w.Append(Encoded(2, 1)).ok());
  LogWriter rewind = MakeWriter(at_b);
  ASSERT_TRUE(rewind.Append(Encoded(100, 1)).ok());
  auto inos = ReplayInos();
  EXPECT_EQ(inos, (std::vector<uint64_t>{0, 100}));
}

TEST_F(LogTest, ChainsAcrossSegments) {
  LogWriter w = MakeWriter(Head());
  // ~5 MiB of records across 2 MiB segments.
  for (uint64_t batch = 0; batch < 50; ++batch) {
    ASSERT_TRUE(w.Append(Encoded(batch * 1000, 1000, 80)).ok());
  }
  LogReplayResult result;
  auto inos = ReplayInos(&result);
  ASSERT_EQ(inos.size(), 50000u);
  for (uint64_t i = 0; i < inos.size(); ++i) ASSERT_EQ(inos[i], i);
  EXPECT_GE(result.segments.size(), 3u);
  EXPECT_EQ(result.segments.front(), 0u);
  EXPECT_EQ(result.end.segment, result.segments.back());
}

TEST_F(LogTest, WritingResumesWhereReplayEnded) {
  {
    LogWriter w = MakeWriter(Head());
    ASSERT_TRUE(w.Append(Encoded(0, 4)).ok());
  }
  LogReplayResult result;
  ReplayInos(&result);
  LogWriter resumed = MakeWriter(result.end);
  ASSERT_TRUE(resumed.Append(Encoded(4, 4)).ok());
  auto inos = ReplayInos();
  ASSERT_EQ(inos.size(), 8u);
  EXPECT_EQ(inos.back(), 7u);
}

TEST_F(LogTest, BlocksOfAnotherStoreAreIgnored) {
  LogWriter w = MakeWriter(Head());
  ASSERT_TRUE(w.Append(Encoded(0, 4)).ok());
  sb_.store_id ^= 1;
  EXPECT_TRUE(ReplayInos().empty());
}

}  // namespace
}  // namespace ckptfs
