// DataLog: appends land aligned and readable, from memory before a sync and
// from the device after; a flipped bit on the device is caught.
#include "segment/data_log.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "io/memory_device.h"

namespace ckptfs {
namespace {

class DataLogTest : public ::testing::Test {
 protected:
  DataLogTest() : device_(kDataStart + 16 * (2 << 20)) {
    sb_.segment_size = 2 << 20;
    sb_.segment_count = 16;
    sb_.device_size = device_.size();
    segments_ = std::make_unique<SegmentTable>(sb_);
    segments_->FinishReplay({0});
    DataLogOptions options;
    options.memory_budget = 4 * sb_.segment_size;
    log_ = std::make_unique<DataLog>(&device_, sb_, segments_.get(), options);
    log_->Start();
  }

  static std::string Pattern(size_t len, uint32_t seed) {
    std::mt19937 gen(seed);
    std::string s(len, '\0');
    for (char& c : s) c = static_cast<char>(gen());
    return s;
  }

  std::string ReadBack(const PhysicalExtent& e) {
    std::string out(e.length, '\0');
    Status s = log_->Read(e, 0, out.data(), out.size());
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  MemoryDevice device_;
  Superblock sb_;
  std::unique_ptr<SegmentTable> segments_;
  std::unique_ptr<DataLog> log_;
};

TEST_F(DataLogTest, AppendsAreAlignedAndReadableBeforeAndAfterSync) {
  std::string a = Pattern(1000, 1), b = Pattern(5000, 2);
  auto ta = log_->Append(a.data(), a.size());
  auto tb = log_->Append(b.data(), b.size());
  ASSERT_TRUE(ta.ok() && tb.ok());
  PhysicalExtent ea = ta->extent(), eb = tb->extent();
  ta->Done();
  tb->Done();
  EXPECT_EQ(ea.addr % kBlockSize, 0u);
  EXPECT_EQ(eb.addr, ea.addr + kBlockSize);  // 1000 bytes take one block
  EXPECT_EQ(ReadBack(ea), a);
  ASSERT_TRUE(log_->Sync().ok());
  ASSERT_TRUE(log_->Close().ok());
  EXPECT_EQ(ReadBack(eb), b);  // now served from the device, checksum verified
}

TEST_F(DataLogTest, FullSegmentsAreWrittenWhole) {
  std::string chunk = Pattern(1 << 20, 3);
  std::vector<PhysicalExtent> extents;
  for (int i = 0; i < 6; ++i) {
    auto t = log_->Append(chunk.data(), chunk.size());
    ASSERT_TRUE(t.ok());
    extents.push_back(t->extent());
  }
  ASSERT_TRUE(log_->Close().ok());
  EXPECT_GE(log_->stats().segments_written, 3u);
  for (const auto& e : extents) EXPECT_EQ(ReadBack(e), chunk);
}

TEST_F(DataLogTest, FlippedBitOnDeviceIsCorruption) {
  std::string a = Pattern(8192, 4);
  auto t = log_->Append(a.data(), a.size());
  ASSERT_TRUE(t.ok());
  PhysicalExtent e = t->extent();
  t->Done();
  ASSERT_TRUE(log_->Close().ok());
  device_.bytes()[e.addr + 4000] ^= 0x01;
  std::string out(a.size(), '\0');
  Status s = log_->Read(e, 0, out.data(), out.size());
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

TEST_F(DataLogTest, ConcurrentAppendersAllLand) {
  constexpr int kThreads = 4, kPerThread = 40;
  std::vector<std::vector<std::pair<PhysicalExtent, std::string>>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string d = Pattern(4096 * (1 + (i % 16)) - 100, t * 1000 + i);
        auto ticket = log_->Append(d.data(), d.size());
        ASSERT_TRUE(ticket.ok());
        got[t].emplace_back(ticket->extent(), d);
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(log_->Close().ok());
  for (auto& per : got) {
    for (auto& [e, d] : per) ASSERT_EQ(ReadBack(e), d);
  }
}

TEST_F(DataLogTest, RunsOutOfSegmentsWithNoSpace) {
  std::string chunk = Pattern(1 << 20, 5);
  Status last;
  for (int i = 0; i < 64 && last.ok(); ++i) {
    auto t = log_->Append(chunk.data(), chunk.size());
    last = t.status();
  }
  EXPECT_TRUE(last.IsNoSpace()) << last.ToString();
}

}  // namespace
}  // namespace ckptfs
