// Real writes and restores into a temporary directory: a small burst must
// restore cleanly, by read() or through mmap, and a flipped byte or a
// truncated file must be caught either way.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "burst_runner.h"
#include "temp_dir.h"

namespace ckptfs::replay {

using ckptfs::testing::TempDir;
namespace {

// A 405B-shaped burst (same layout, files and tensor order) scaled to ~6 MB.
WorkloadSpec SmallBurst() {
  WorkloadSpec spec = FindPreset("llama3-405b").value();
  spec.scale = 1e-6;
  return spec;
}

size_t CountFiles(const std::string& dir) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) files += entry.is_regular_file();
  return files;
}

void FlipByte(const std::string& path, off_t offset) {
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  unsigned char byte = 0;
  ASSERT_EQ(::pread(fd, &byte, 1, offset), 1);
  byte ^= 0x20;
  ASSERT_EQ(::pwrite(fd, &byte, 1, offset), 1);
  ::close(fd);
}

TEST(BurstRestore, WritesEveryPlannedFileAndRestoresIt) {
  TempDir dir;
  BurstOptions options;
  options.dir = dir.path();
  options.checkpoints = 2;
  options.restore = true;
  Result<std::vector<PhaseResult>> phases = RunBurst(SmallBurst(), options);
  ASSERT_TRUE(phases.ok()) << phases.status().ToString();
  ASSERT_EQ(phases->size(), 4u);  // two writes, then two restores
  CheckpointPlan plan = BuildCheckpointPlan(SmallBurst(), {1, 1}).value();
  for (const PhaseResult& phase : *phases) {
    EXPECT_EQ(phase.files, plan.FileCount());
    EXPECT_EQ(phase.bytes, plan.FileBytes());
    EXPECT_EQ(phase.ranks.size(), 8u);
    EXPECT_GT(phase.seconds, 0);
    for (const RankResult& rank : phase.ranks) EXPECT_LE(rank.seconds, phase.seconds);
  }
  EXPECT_EQ((*phases)[2].kind, "restore");
  EXPECT_EQ(CountFiles(dir.path()), 2 * plan.FileCount());
  const PlannedFile& file = plan.ranks[3].files[7];
  EXPECT_EQ(std::filesystem::file_size(dir.path() + "/" + file.relative_path), file.FileBytes());
}

TEST(BurstRestore, DetectsACorruptedByte) {
  TempDir dir;
  CheckpointPlan plan = BuildCheckpointPlan(SmallBurst(), {1, 1}).value();
  RankIo io;
  io.dir = dir.path();
  io.fsync = false;
  std::vector<std::byte> buffer;
  const RankPlan& rank = plan.ranks[6];
  ASSERT_TRUE(WriteRankFiles(rank, io, buffer, [](uint64_t) {}).ok());
  ASSERT_TRUE(VerifyRankFiles(rank, io, buffer, [](uint64_t) {}).ok());

  const PlannedFile& victim = rank.files[10];
  FlipByte(dir.path() + "/" + victim.relative_path, 700);
  Status st = VerifyRankFiles(rank, io, buffer, [](uint64_t) {});
  ASSERT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find(victim.relative_path + ": content mismatch at offset 700"), std::string::npos)
      << st.message();
}

TEST(BurstRestore, MmapRestoreReadsTheSameBytesAndCatchesAFlippedOne) {
  TempDir dir;
  CheckpointPlan plan = BuildCheckpointPlan(SmallBurst(), {1, 1}).value();
  RankIo io;
  io.dir = dir.path();
  io.fsync = false;
  std::vector<std::byte> buffer;
  const RankPlan& rank = plan.ranks[2];
  ASSERT_TRUE(WriteRankFiles(rank, io, buffer, [](uint64_t) {}).ok());
  io.restore_mode = RestoreMode::kMmap;
  std::vector<std::byte> unused;
  uint64_t verified = 0;
  ASSERT_TRUE(VerifyRankFiles(rank, io, unused, [&](uint64_t n) { verified += n; }).ok());
  EXPECT_EQ(verified, rank.FileBytes());
  EXPECT_TRUE(unused.empty());  // compared in place, never copied

  const PlannedFile& victim = rank.files[4];
  FlipByte(dir.path() + "/" + victim.relative_path, 1000);
  Status st = VerifyRankFiles(rank, io, unused, [](uint64_t) {});
  ASSERT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find(victim.relative_path + ": content mismatch at offset 1000"), std::string::npos)
      << st.message();
}

TEST(BurstRestore, RestoreOnlyReadsWhatAnEarlierRunWrote) {
  TempDir dir;
  BurstOptions options;
  options.dir = dir.path();
  options.checkpoints = 2;
  ASSERT_TRUE(RunBurst(SmallBurst(), options).ok());
  options.restore_only = true;
  options.restore_mode = RestoreMode::kMmap;
  Result<std::vector<PhaseResult>> phases = RunBurst(SmallBurst(), options);
  ASSERT_TRUE(phases.ok()) << phases.status().ToString();
  ASSERT_EQ(phases->size(), 2u);
  CheckpointPlan plan = BuildCheckpointPlan(SmallBurst(), {1, 1}).value();
  for (const PhaseResult& phase : *phases) {
    EXPECT_EQ(phase.kind, "restore");
    EXPECT_EQ(phase.bytes, plan.FileBytes());
    EXPECT_NE(std::find(phase.notes.begin(), phase.notes.end(), "read through mmap"), phase.notes.end());
  }
  // With nothing on disk there is nothing to restore: the run fails.
  options.checkpoints = 3;
  EXPECT_FALSE(RunBurst(SmallBurst(), options).ok());
}

TEST(BurstRestore, DetectsATruncatedFile) {
  TempDir dir;
  CheckpointPlan plan = BuildCheckpointPlan(SmallBurst(), {1, 1}).value();
  RankIo io;
  io.dir = dir.path();
  std::vector<std::byte> buffer;
  ASSERT_TRUE(WriteRankFiles(plan.ranks[0], io, buffer, [](uint64_t) {}).ok());
  const PlannedFile& victim = plan.ranks[0].files.back();
  std::filesystem::resize_file(dir.path() + "/" + victim.relative_path, victim.FileBytes() - 1);
  Status st = VerifyRankFiles(plan.ranks[0], io, buffer, [](uint64_t) {});
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
}

TEST(BurstRestore, SmallMaxWriteSplitsTensorsWithoutChangingContent) {
  TempDir dir;
  CheckpointPlan plan = BuildCheckpointPlan(SmallBurst(), {1, 1}).value();
  RankIo writer;
  writer.dir = dir.path();
  writer.max_write = 4096;
  RankIo reader = writer;
  reader.max_write = 1 << 20;
  std::vector<std::byte> buffer;
  ASSERT_TRUE(WriteRankFiles(plan.ranks[1], writer, buffer, [](uint64_t) {}).ok());
  EXPECT_TRUE(VerifyRankFiles(plan.ranks[1], reader, buffer, [](uint64_t) {}).ok());
}

TEST(BurstRestore, RetentionKeepsOnlyTheNewestCheckpoints) {
  TempDir dir;
  BurstOptions options;
  options.dir = dir.path();
  options.checkpoints = 3;
  options.keep = 2;
  options.restore = true;
  Result<std::vector<PhaseResult>> phases = RunBurst(SmallBurst(), options);
  ASSERT_TRUE(phases.ok()) << phases.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/global_epoch1_step1"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/global_epoch1_step2"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/global_epoch1_step3"));
  ASSERT_EQ(phases->size(), 3u + 2u);  // the deleted checkpoint is not restored
  EXPECT_NE((*phases)[2].notes.at(0).find("retention: deleted epoch 1 step 1"), std::string::npos);
}

TEST(BurstRestore, MilestonesOutliveRetentionAndTheLogGrowsBeside) {
  TempDir dir;
  BurstOptions options;
  options.dir = dir.path();
  options.checkpoints = 3;
  options.passes = 2;
  options.keep = 2;
  options.keep_every = 4;  // the 4th checkpoint, epoch 2 step 4, is a milestone
  options.appender_bytes_per_s = 64 << 10;
  Result<std::vector<PhaseResult>> phases = RunBurst(SmallBurst(), options);
  ASSERT_TRUE(phases.ok()) << phases.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/global_epoch1_step3"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/global_epoch2_step4"));   // milestone
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/global_epoch2_step5"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/global_epoch2_step6"));
  ASSERT_TRUE(std::filesystem::exists(dir.path() + "/train.log"));
  EXPECT_GT(std::filesystem::file_size(dir.path() + "/train.log"), 0u);
  EXPECT_NE(phases->back().notes.back().find("appender:"), std::string::npos);
}

TEST(BurstRestore, ZerosPayloadWritesZeros) {
  TempDir dir;
  WorkloadSpec spec = FindPreset("llama3-405b-dlio-v2.0").value();
  spec.scale = 1e-7;
  BurstOptions options;
  options.dir = dir.path();
  options.restore = true;
  Result<std::vector<PhaseResult>> phases = RunBurst(spec, options);
  ASSERT_TRUE(phases.ok()) << phases.status().ToString();
  EXPECT_EQ(CountFiles(dir.path()), 352u);
  std::string layer = dir.path() + "/layer-3-1-1-4.pt";
  ASSERT_TRUE(std::filesystem::exists(layer));
  int fd = ::open(layer.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  char bytes[64];
  ASSERT_EQ(::pread(fd, bytes, sizeof bytes, 100), static_cast<ssize_t>(sizeof bytes));
  ::close(fd);
  for (char b : bytes) EXPECT_EQ(b, 0);
}

}  // namespace
}  // namespace ckptfs::replay
