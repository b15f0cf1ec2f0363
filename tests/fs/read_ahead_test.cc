// Loading ahead of a sequential reader (MountOptions::prefetch_bytes): which
// reads count as sequential and what lies ahead of them (SequentialReads),
// the worker threads that load it (RunPrefetcher), and a store that, read
// front to back, has the next runs in memory before the reader asks.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ckptfs/filesystem.h"
#include "io/fault_injection_device.h"
#include "io/memory_device.h"
#include "open_device.h"
#include "segment/read_pins.h"
#include "segment/run_prefetcher.h"
#include "segment/sequential_reads.h"

namespace ckptfs {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(SequentialReadsTest, AStreamFromTheStartLoadsAWindowAheadAndRefillsAtHalf) {
  SequentialReads reads(4 * kMiB);
  const uint64_t size = 100 * kMiB;
  ReadAheadRange r = reads.Next(7, 0, kMiB, size, true);
  EXPECT_EQ(r.offset, kMiB);
  EXPECT_EQ(r.length, 4 * kMiB);
  // 3 MiB and then 2 MiB still ahead: nothing more yet.
  EXPECT_EQ(reads.Next(7, kMiB, kMiB, size, true).length, 0u);
  EXPECT_EQ(reads.Next(7, 2 * kMiB, kMiB, size, true).length, 0u);
  // Under half the window left: refilled from where the last load ended.
  r = reads.Next(7, 3 * kMiB, kMiB, size, true);
  EXPECT_EQ(r.offset, 5 * kMiB);
  EXPECT_EQ(r.length, 3 * kMiB);
}

TEST(SequentialReadsTest, AJumpRestartsTheStreamAndFilesAreApart) {
  SequentialReads reads(4 * kMiB);
  const uint64_t size = 100 * kMiB;
  EXPECT_EQ(reads.Next(1, 0, kMiB, size, true).length, 4 * kMiB);
  // A read elsewhere in the file is no stream yet...
  EXPECT_EQ(reads.Next(1, 50 * kMiB, kMiB, size, true).length, 0u);
  // ...its continuation is, and loads from its own end.
  ReadAheadRange r = reads.Next(1, 51 * kMiB, kMiB, size, true);
  EXPECT_EQ(r.offset, 52 * kMiB);
  EXPECT_EQ(r.length, 4 * kMiB);
  // Another file has a stream of its own.
  EXPECT_EQ(reads.Next(2, 0, kMiB, size, true).offset, kMiB);
  // Reading the first file from the start again loads ahead again.
  r = reads.Next(1, 0, kMiB, size, true);
  EXPECT_EQ(r.offset, kMiB);
  EXPECT_EQ(r.length, 4 * kMiB);
}

TEST(SequentialReadsTest, NothingPastTheEndOfTheFileAndNothingWhenNotAllowed) {
  SequentialReads reads(4 * kMiB);
  ReadAheadRange r = reads.Next(3, 0, kMiB, 2 * kMiB + 10, true);
  EXPECT_EQ(r.offset, kMiB);
  EXPECT_EQ(r.length, kMiB + 10);
  EXPECT_EQ(reads.Next(3, kMiB, kMiB, 2 * kMiB + 10, true).length, 0u);
  // Not allowed to load (the device is busy): the stream goes on, and
  // loads again once allowed.
  EXPECT_EQ(reads.Next(4, 0, kMiB, 100 * kMiB, false).length, 0u);
  EXPECT_EQ(reads.Next(4, kMiB, kMiB, 100 * kMiB, false).length, 0u);
  r = reads.Next(4, 2 * kMiB, kMiB, 100 * kMiB, true);
  EXPECT_EQ(r.offset, 3 * kMiB);
  EXPECT_EQ(r.length, 4 * kMiB);
}

PhysicalExtent RunAt(uint64_t addr) {
  PhysicalExtent e;
  e.addr = addr;
  e.length = 4096;
  return e;
}

TEST(RunPrefetcherTest, LoadsWhatIsQueuedOnItsThreadsAndDropsTheRestAtStop) {
  std::mutex mu;
  std::vector<uint64_t> loaded;
  std::atomic<int> held{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  RunPrefetcher prefetcher(2, 3, [&](const PhysicalExtent& run) {
    if (run.addr >= 100) {  // these hold their thread until released
      held.fetch_add(1);
      released.wait();
    }
    std::lock_guard<std::mutex> l(mu);
    loaded.push_back(run.addr);
    return run.addr != 3;  // 3 was in memory already: not counted as read ahead
  });
  // Before Start nothing would run them: dropped.
  prefetcher.Submit({RunAt(1)}, nullptr);
  EXPECT_EQ(prefetcher.dropped(), 1u);
  prefetcher.Start();
  prefetcher.Submit({RunAt(2), RunAt(3)}, nullptr);
  for (int i = 0; i < 1000 && prefetcher.pending() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(prefetcher.pending(), 0u);
  EXPECT_EQ(prefetcher.loaded(), 1u);
  // Both threads held: three runs wait, the queue's room; the fourth is dropped.
  prefetcher.Submit({RunAt(100), RunAt(101)}, nullptr);
  for (int i = 0; i < 1000 && held.load() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(held.load(), 2);
  prefetcher.Submit({RunAt(4), RunAt(5), RunAt(6), RunAt(7)}, nullptr);
  EXPECT_EQ(prefetcher.dropped(), 2u);
  EXPECT_EQ(prefetcher.pending(), 5u);  // two loading, three queued
  // Stop drops the queued runs and waits for the loads in progress.
  std::thread stopper([&] { prefetcher.Stop(); });
  for (int i = 0; i < 1000 && prefetcher.dropped() < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(prefetcher.dropped(), 5u);
  release.set_value();
  stopper.join();
  EXPECT_EQ(prefetcher.loaded(), 3u);
  EXPECT_EQ(prefetcher.pending(), 0u);
  std::lock_guard<std::mutex> l(mu);
  std::sort(loaded.begin(), loaded.end());  // two threads: any order
  EXPECT_EQ(loaded, (std::vector<uint64_t>{2, 3, 100, 101}));
}

// A device that can be told to fail every read: a read that succeeds then
// was served from memory.
class CutOffDevice : public BlockDevice {
 public:
  explicit CutOffDevice(BlockDevice* base) : base_(base) {}
  Status Read(uint64_t offset, void* buf, size_t len) override {
    if (cut_off_.load()) return Status::IOError("cut off by the test");
    return base_->Read(offset, buf, len);
  }
  Status Write(uint64_t offset, const void* buf, size_t len) override { return base_->Write(offset, buf, len); }
  Status Flush() override { return base_->Flush(); }
  uint64_t size() const override { return base_->size(); }
  void CutOff(bool cut) { cut_off_.store(cut); }

 private:
  BlockDevice* const base_;
  std::atomic<bool> cut_off_{false};
};

class ReadAheadStoreTest : public ::testing::Test {
 protected:
  ReadAheadStoreTest() : device_(256 << 20), data_(16 * kMiB, '\0') {
    std::mt19937 gen(5);
    for (char& c : data_) c = static_cast<char>(gen());
  }

  void SetUp() override {
    FormatOptions f;
    f.segment_size = 4 * kMiB;
    ASSERT_TRUE(FormatDevice(&device_, f).ok());
    auto opened = OpenFileSystemOnDevice(BorrowDevice(&device_), Mount(0, /*read_only=*/false));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<FileSystem> fs = std::move(opened).value();
    fs->Start();
    auto st = fs->Create(1, "model.pt", 0644, 0, 0);
    ASSERT_TRUE(st.ok());
    ino_ = st->st_ino;
    for (uint64_t at = 0; at < data_.size(); at += kMiB) {
      ASSERT_TRUE(fs->Write(ino_, at, data_.data() + at, kMiB).ok());
    }
    ASSERT_TRUE(fs->Close().ok());
  }

  static MountOptions Mount(uint64_t prefetch, bool read_only = true) {
    MountOptions m;
    m.memory_budget = 64 << 20;
    m.use_uring = false;
    m.read_only = read_only;
    m.prefetch_bytes = prefetch;
    return m;
  }

  std::unique_ptr<FileSystem> Open(uint64_t prefetch) {
    auto device = std::make_unique<CutOffDevice>(&device_);
    cut_off_ = device.get();
    auto opened = OpenFileSystemOnDevice(std::move(device), Mount(prefetch));
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return nullptr;
    std::unique_ptr<FileSystem> fs = std::move(opened).value();
    fs->Start();
    return fs;
  }

  // Until the runs queued for reading ahead are loaded (or failed).
  static void WaitForReadAhead(FileSystem* fs) {
    for (int i = 0; i < 1000 && fs->Stats().prefetch_pending > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(fs->Stats().prefetch_pending, 0u);
  }

  // Reads [offset, offset + len) and checks it against what was written.
  void ExpectRead(FileSystem* fs, uint64_t offset, size_t len) {
    std::string out(len, '\0');
    auto n = fs->Read(ino_, offset, len, out.data());
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_EQ(*n, len);
    EXPECT_TRUE(out == data_.substr(offset, len)) << "bytes " << offset << ".." << offset + len;
  }

  MemoryDevice device_;
  CutOffDevice* cut_off_ = nullptr;  // under the store Open returned last
  std::string data_;
  uint64_t ino_ = 0;
};

TEST_F(ReadAheadStoreTest, TheRunsAheadOfASequentialReaderAreInMemoryBeforeItAsks) {
  std::unique_ptr<FileSystem> fs = Open(4 * kMiB);
  ASSERT_TRUE(fs);
  ExpectRead(fs.get(), 0, 512 << 10);
  // [512 KiB, 4.5 MiB) is loaded ahead: at least four runs of up to 1 MiB
  // (the first is in memory already).
  WaitForReadAhead(fs.get());
  ASSERT_GE(fs->Stats().prefetched_runs, 4u);
  // With the device gone the next 4 MiB still read, from memory; the
  // loads ahead of them fail, quietly.
  cut_off_->CutOff(true);
  ExpectRead(fs.get(), 512 << 10, 4 * kMiB);
  EXPECT_EQ(fs->Stats().read_errors, 0u);
  // Past the window the reader needs the device, and says so.
  std::string out(kMiB, '\0');
  EXPECT_FALSE(fs->Read(ino_, 9 * kMiB, kMiB, out.data()).ok());
  // Back, the reader loads what the failed loads ahead did not, also
  // when it meets one of them still failing.
  cut_off_->CutOff(false);
  for (uint64_t at = 4 * kMiB + (512 << 10); at < data_.size(); at += kMiB) {
    ExpectRead(fs.get(), at, std::min<uint64_t>(kMiB, data_.size() - at));
  }
  ASSERT_TRUE(fs->Close().ok());
}

// Read ahead on a store that is written meanwhile: every pass reads the bytes
// of the last overwrite, although the segments of the passes before are
// freed and handed out again while loads ahead of them may be queued.
TEST_F(ReadAheadStoreTest, AStoreRewrittenUnderItsReadersStillReadsItsLatestBytes) {
  auto opened = OpenFileSystemOnDevice(BorrowDevice(&device_), Mount(4 * kMiB, /*read_only=*/false));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<FileSystem> fs = std::move(opened).value();
  fs->Start();
  std::mt19937 gen(11);
  for (int pass = 0; pass < 24; ++pass) {  // 24 x 16 MiB through a 256 MiB store
    for (char& c : data_) c = static_cast<char>(gen());
    for (uint64_t at = 0; at < data_.size(); at += kMiB) {
      ASSERT_TRUE(fs->Write(ino_, at, data_.data() + at, kMiB).ok());
    }
    ASSERT_TRUE(fs->Sync().ok());
    for (uint64_t at = 0; at < data_.size(); at += 512 << 10) ExpectRead(fs.get(), at, 512 << 10);
  }
  EXPECT_GT(fs->Stats().segments_written, 256u / 4) << "no segment was used twice";
  ASSERT_TRUE(fs->Close().ok());
}

TEST_F(ReadAheadStoreTest, WithoutPrefetchNothingIsLoadedAhead) {
  std::unique_ptr<FileSystem> fs = Open(0);
  ASSERT_TRUE(fs);
  ExpectRead(fs.get(), 0, 512 << 10);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  cut_off_->CutOff(true);
  std::string out(kMiB, '\0');
  EXPECT_FALSE(fs->Read(ino_, 1 * kMiB, kMiB, out.data()).ok());
  EXPECT_EQ(fs->Stats().prefetched_runs, 0u);
  cut_off_->CutOff(false);
  ExpectRead(fs.get(), 512 << 10, 4 * kMiB);
  ASSERT_TRUE(fs->Close().ok());
}

}  // namespace
}  // namespace ckptfs
