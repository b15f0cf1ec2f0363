// FaultInjectingDevice: synced writes survive a power cut, unsynced ones are
// dropped, kept or torn as asked, and scheduled faults hit the right write.
#include "io/fault_injection_device.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "io/memory_device.h"
#include "util/aligned_buffer.h"

namespace ckptfs {
namespace {

constexpr uint64_t kDeviceSize = 1 << 20;

class FaultInjectionDeviceTest : public ::testing::Test {
 protected:
  FaultInjectionDeviceTest()
      : dev_(std::make_unique<MemoryDevice>(kDeviceSize)) {}

  // Writes `blocks` blocks filled with `fill` at block `block`.
  Status WriteBlocks(uint64_t block, size_t blocks, char fill) {
    AlignedBuffer buf(blocks * kBlockSize);
    std::memset(buf.data(), fill, buf.size());
    return dev_.Write(block * kBlockSize, buf.data(), buf.size());
  }
  // The fill byte of each block [block, block + blocks) of `device`, as a string.
  static std::string Blocks(BlockDevice* device, uint64_t block, size_t blocks) {
    std::string out;
    AlignedBuffer buf(kBlockSize);
    for (size_t i = 0; i < blocks; ++i) {
      EXPECT_TRUE(device->Read((block + i) * kBlockSize, buf.data(), kBlockSize).ok());
      for (size_t j = 1; j < kBlockSize; ++j) {
        EXPECT_EQ(buf.data()[j], buf.data()[0]) << "block " << block + i << " is mixed";
      }
      out.push_back(buf.data()[0] ? buf.data()[0] : '.');
    }
    return out;
  }

  FaultInjectingDevice dev_;
};

TEST_F(FaultInjectionDeviceTest, SyncedWritesAreKeptAndUnsyncedOnesDropped) {
  ASSERT_TRUE(WriteBlocks(0, 2, 'a').ok());
  ASSERT_TRUE(dev_.Flush().ok());
  ASSERT_TRUE(WriteBlocks(1, 2, 'b').ok());  // overwrites a synced block
  ASSERT_TRUE(WriteBlocks(5, 1, 'c').ok());
  EXPECT_EQ(dev_.unsynced_writes(), 2u);
  EXPECT_EQ(Blocks(&dev_, 0, 6), "abb..c");  // reads see the cache

  PowerLossReport report;
  auto dropped = dev_.PowerLossImage(PowerLoss::DropUnsynced(), &report);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(Blocks(dropped->get(), 0, 6), "aa....");
  EXPECT_EQ(report.unsynced, 2u);
  EXPECT_EQ(report.dropped, 2u);

  auto kept = dev_.PowerLossImage(PowerLoss::KeepUnsynced(), &report);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(Blocks(kept->get(), 0, 6), "abb..c");
  EXPECT_EQ(report.kept, 2u);

  // Taking an image changes nothing; a flush makes everything durable.
  EXPECT_EQ(Blocks(&dev_, 0, 6), "abb..c");
  ASSERT_TRUE(dev_.Flush().ok());
  EXPECT_EQ(dev_.unsynced_writes(), 0u);
  auto after = dev_.PowerLossImage(PowerLoss::DropUnsynced());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(Blocks(after->get(), 0, 6), "abb..c");
}

TEST_F(FaultInjectionDeviceTest, OverlappingUnsyncedWritesUndoInOrder) {
  ASSERT_TRUE(WriteBlocks(0, 4, 'a').ok());
  ASSERT_TRUE(dev_.Flush().ok());
  ASSERT_TRUE(WriteBlocks(0, 3, 'b').ok());
  ASSERT_TRUE(WriteBlocks(1, 3, 'c').ok());
  ASSERT_TRUE(WriteBlocks(2, 1, 'd').ok());
  auto image = dev_.PowerLossImage(PowerLoss::DropUnsynced());
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(Blocks(image->get(), 0, 4), "aaaa");
  // In place: the wrapped device becomes the image and the power is back.
  ASSERT_TRUE(dev_.SimulatePowerLoss(PowerLoss::DropUnsynced()).ok());
  EXPECT_EQ(Blocks(dev_.base(), 0, 4), "aaaa");
  EXPECT_EQ(dev_.unsynced_writes(), 0u);
  EXPECT_TRUE(WriteBlocks(3, 1, 'e').ok());
}

TEST_F(FaultInjectionDeviceTest, RandomLossKeepsASubsetAndTearsAtBlockGranularity) {
  ASSERT_TRUE(dev_.Flush().ok());
  // 32 unsynced writes of 4 blocks each, to distinct places.
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(WriteBlocks(i * 4, 4, 'A' + (i % 26)).ok());
  uint64_t kept = 0, torn = 0, dropped = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    PowerLossReport report;
    auto image = dev_.PowerLossImage(PowerLoss::Random(seed), &report);
    ASSERT_TRUE(image.ok());
    EXPECT_EQ(report.kept + report.torn + report.dropped, 32u);
    kept += report.kept;
    torn += report.torn;
    dropped += report.dropped;
    for (int i = 0; i < 32; ++i) {
      // Each write leaves a prefix of its blocks: "XXXX", "XX..", "....", never a gap.
      std::string b = Blocks(image->get(), i * 4, 4);
      const size_t n = b.find('.') == std::string::npos ? 4 : b.find('.');
      EXPECT_EQ(b, std::string(n, 'A' + (i % 26)) + std::string(4 - n, '.')) << "write " << i;
    }
    // The same seed gives the same image.
    auto again = dev_.PowerLossImage(PowerLoss::Random(seed));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.value()->bytes(), image.value()->bytes());
  }
  EXPECT_GT(kept, 0u);
  EXPECT_GT(torn, 0u);
  EXPECT_GT(dropped, 0u);
}

TEST_F(FaultInjectionDeviceTest, TornWriteKeepsAnAlignedPrefixAndCutsThePower) {
  ASSERT_TRUE(dev_.Flush().ok());
  dev_.TearWrite(2, 2 * kBlockSize + 100);  // rounds down to 2 blocks
  ASSERT_TRUE(WriteBlocks(0, 1, 'a').ok());
  Status s = WriteBlocks(4, 4, 'b');
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_TRUE(dev_.powered_off());
  EXPECT_TRUE(WriteBlocks(10, 1, 'c').IsIOError());
  EXPECT_TRUE(dev_.Flush().IsIOError());
  EXPECT_EQ(dev_.writes(), 3u);
  auto kept = dev_.PowerLossImage(PowerLoss::KeepUnsynced());
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(Blocks(kept->get(), 0, 11), "a...bb.....");
  auto dropped = dev_.PowerLossImage(PowerLoss::DropUnsynced());
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(Blocks(dropped->get(), 0, 11), "...........");
}

TEST_F(FaultInjectionDeviceTest, NthWriteFailsWithTheGivenErrorAndTheDeviceGoesOn) {
  dev_.FailWrite(3, EIO);
  dev_.FailWrite(4, ENOSPC);
  ASSERT_TRUE(WriteBlocks(0, 1, 'a').ok());
  ASSERT_TRUE(WriteBlocks(1, 1, 'b').ok());
  Status eio = WriteBlocks(2, 1, 'c');
  EXPECT_TRUE(eio.IsIOError()) << eio.ToString();
  Status enospc = WriteBlocks(3, 1, 'd');
  EXPECT_TRUE(enospc.IsNoSpace()) << enospc.ToString();
  ASSERT_TRUE(WriteBlocks(4, 1, 'e').ok());
  ASSERT_TRUE(dev_.Flush().ok());
  EXPECT_FALSE(dev_.powered_off());
  EXPECT_EQ(dev_.writes(), 5u);
  EXPECT_EQ(Blocks(&dev_, 0, 5), "ab..e");  // failed writes wrote nothing
}

TEST_F(FaultInjectionDeviceTest, StopAfterWritesLetsExactlyNThrough) {
  ASSERT_TRUE(WriteBlocks(0, 1, 'a').ok());
  dev_.StopAfterWrites(2);
  ASSERT_TRUE(WriteBlocks(1, 1, 'b').ok());
  ASSERT_TRUE(dev_.Flush().ok());  // the power is still on between the writes
  ASSERT_TRUE(WriteBlocks(2, 1, 'c').ok());
  EXPECT_TRUE(dev_.powered_off());
  EXPECT_TRUE(dev_.Flush().IsIOError());
  EXPECT_TRUE(WriteBlocks(3, 1, 'd').IsIOError());
  auto image = dev_.PowerLossImage(PowerLoss::DropUnsynced());
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(Blocks(image->get(), 0, 4), "ab..");
  auto kept = dev_.PowerLossImage(PowerLoss::KeepUnsynced());
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(Blocks(kept->get(), 0, 4), "abc.");
  // Reboot: power back, the cut image in place.
  ASSERT_TRUE(dev_.SimulatePowerLoss(PowerLoss::KeepUnsynced()).ok());
  EXPECT_FALSE(dev_.powered_off());
  ASSERT_TRUE(WriteBlocks(3, 1, 'd').ok());
  EXPECT_EQ(Blocks(&dev_, 0, 4), "abcd");
}

TEST_F(FaultInjectionDeviceTest, MisalignedWriteIsRefusedAndNotRecorded) {
  AlignedBuffer buf(2 * kBlockSize);
  EXPECT_FALSE(dev_.Write(100, buf.data(), kBlockSize).ok());
  EXPECT_FALSE(dev_.Write(0, buf.data(), 100).ok());
  EXPECT_EQ(dev_.unsynced_writes(), 0u);
}

}  // namespace
}  // namespace ckptfs
