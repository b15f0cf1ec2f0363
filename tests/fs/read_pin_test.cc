// A read in flight must not hold up a commit: reads pin the segments they
// read (ReadPins) instead of holding a lock the commit needs. Before, a read
// held a shared lock across its device I/O that every commit took
// exclusively, so this fsync waited for the read.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>

#include "borrowed_device.h"
#include "ckptfs/filesystem.h"
#include "io/memory_device.h"
#include "open_device.h"

namespace ckptfs {
namespace {

// Forwards to a MemoryDevice; once armed, the next read parks until Open().
class GatedDevice : public BlockDevice {
 public:
  explicit GatedDevice(uint64_t size) : base_(size) {}
  Status Read(uint64_t offset, void* buf, size_t len) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (armed_) {
        armed_ = false;
        parked_ = true;
        cv_.notify_all();
        cv_.wait(lock, [&] { return open_; });
      }
    }
    return base_.Read(offset, buf, len);
  }
  Status Write(uint64_t offset, const void* buf, size_t len) override {
    return base_.Write(offset, buf, len);
  }
  Status Flush() override { return base_.Flush(); }
  uint64_t size() const override { return base_.size(); }

  void Arm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
  }
  bool WaitParked(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return parked_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  MemoryDevice base_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool parked_ = false;
  bool open_ = false;
};

using Borrowed = testing::BorrowedDevice;

TEST(ReadPinTest, FsyncDoesNotWaitForAReadInFlight) {
  constexpr uint64_t kSegment = 2 << 20;
  GatedDevice device(64 * kSegment);
  FormatOptions format;
  format.segment_size = kSegment;
  ASSERT_TRUE(FormatDevice(&device, format).ok());
  MountOptions options;
  options.memory_budget = 8 << 20;
  options.commit_interval_ms = 60000;  // only the test's fsync commits
  auto opened = OpenFileSystemOnDevice(std::make_unique<Borrowed>(&device), options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<FileSystem> fs = std::move(opened).value();
  fs->Start();

  // Three segments' worth, so the first is written out and read from the device.
  const std::string content(3 * kSegment, 'c');
  auto file = fs->Create(1, "checkpoint", 0644, 0, 0);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(fs->Write(file->st_ino, 0, content.data(), content.size()).ok());
  auto other = fs->Create(1, "old", 0644, 0, 0);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(fs->Write(other->st_ino, 0, content.data(), 4096).ok());
  ASSERT_TRUE(fs->Sync().ok());

  device.Arm();
  auto reader = std::async(std::launch::async, [&] {
    std::string buf(1 << 20, '\0');
    return fs->Read(file->st_ino, 0, buf.size(), buf.data());
  });
  ASSERT_TRUE(device.WaitParked(std::chrono::seconds(10))) << "the read never reached the device";

  // A change and an fsync while the read is parked inside the device.
  ASSERT_TRUE(fs->Unlink(1, "old").ok());
  auto syncer = std::async(std::launch::async, [&] { return fs->Sync(); });
  const bool synced = syncer.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  device.Open();
  EXPECT_TRUE(synced) << "fsync waited for a read in flight";
  ASSERT_TRUE(syncer.get().ok());
  auto read = reader.get();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, 1u << 20);
  ASSERT_TRUE(fs->Close().ok());
}

}  // namespace
}  // namespace ckptfs
