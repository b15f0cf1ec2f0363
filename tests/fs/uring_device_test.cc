// UringDevice on a real file: large writes land whole, and a write whose
// submit or wait failed never leaves its ring to the next writer with SQEs
// still prepared or requests still in flight. Failures are injected through
// UringDevice::SetRingCallsForTest; waits in these tests time out instead of
// blocking forever, so a dirty ring fails the next write rather than hang it.
#include "io/uring_device.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.h"
#include "util/aligned_buffer.h"

namespace ckptfs {
namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kDeviceSize = 64 * kMiB;
constexpr unsigned kQueueDepth = 4;
// Far from where the failed writes go.
constexpr uint64_t kLaterOffset = 32 * kMiB;
// Three chunks: more than one, fewer than the queue depth.
constexpr size_t kLaterLength = 2 * kMiB + 4096;

// A wait that gives up with -ETIME instead of blocking: after 60 s, so a
// lost completion fails the test while a disk the OSDs keep busy does not.
int WaitWithTimeout(io_uring* ring, io_uring_cqe** cqe) {
  __kernel_timespec ts{};
  ts.tv_sec = 60;
  return io_uring_wait_cqe_timeout(ring, cqe, &ts);
}

class UringDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    const std::string path = dir_.path() + "/store";
    int fd = ::open(path.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, kDeviceSize), 0);
    ::close(fd);
    DeviceOptions options;
    options.exclusive = false;
    auto file = FileDevice::Open(path, options);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    device_ = std::make_unique<UringDevice>(std::move(*file), kQueueDepth);
  }

  // Real calls, counted; every wait times out.
  void CountOnly() {
    device_->SetRingCallsForTest({
        [this](io_uring* ring) {
          ++submits_;
          return io_uring_submit(ring);
        },
        WaitWithTimeout,
    });
  }
  // Fails the `nth` submit (1-based) with `err`; every wait times out.
  void FailSubmit(int nth, int err) {
    device_->SetRingCallsForTest({
        [this, nth, err](io_uring* ring) {
          return ++submits_ == nth ? -err : io_uring_submit(ring);
        },
        WaitWithTimeout,
    });
  }
  // Fails waits number `first` to `last` (1-based) with the errors given in
  // turn (the last one repeats); every wait times out.
  void FailWaits(int first, int last, std::vector<int> errs) {
    device_->SetRingCallsForTest({
        nullptr,
        [this, first, last, errs](io_uring* ring, io_uring_cqe** cqe) {
          const int n = ++waits_;
          if (n < first || n > last) return WaitWithTimeout(ring, cqe);
          return -errs[std::min<size_t>(n - first, errs.size() - 1)];
        },
    });
  }

  // `len` bytes of `fill`.
  static AlignedBuffer Filled(size_t len, char fill) {
    AlignedBuffer buf(len);
    std::memset(buf.data(), fill, len);
    return buf;
  }
  // The device's bytes [offset, offset + len).
  std::string ReadBack(uint64_t offset, size_t len) {
    AlignedBuffer buf(len);
    Status s = device_->Read(offset, buf.data(), len);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return std::string(buf.data(), len);
  }

  // A write after the failed one, through the same device (and so the same
  // ring, if it was pooled): it must succeed and land exactly.
  void ExpectNextWriteLands() {
    AlignedBuffer later = Filled(kLaterLength, 'B');
    Status s = device_->Write(kLaterOffset, later.data(), later.size());
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(ReadBack(kLaterOffset, kLaterLength), std::string(kLaterLength, 'B'));
  }

  testing::TempDir dir_{"ckptfs-uring"};
  std::unique_ptr<UringDevice> device_;
  std::atomic<int> submits_{0};
  std::atomic<int> waits_{0};
};

TEST_F(UringDeviceTest, LargeWritesLandWhole) {
  CountOnly();
  AlignedBuffer a = Filled(9 * kMiB + 8192, 'a');  // more chunks than the queue depth, a short tail
  ASSERT_TRUE(device_->Write(0, a.data(), a.size()).ok());
  EXPECT_EQ(ReadBack(0, a.size()), std::string(a.size(), 'a'));
  // Writers at once each drive their own ring.
  std::vector<std::thread> writers;
  std::vector<Status> results(4);
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      AlignedBuffer buf = Filled(3 * kMiB, static_cast<char>('p' + w));
      results[w] = device_->Write(16 * kMiB + w * 4 * kMiB, buf.data(), buf.size());
    });
  }
  for (auto& t : writers) t.join();
  for (int w = 0; w < 4; ++w) {
    EXPECT_TRUE(results[w].ok()) << results[w].ToString();
    EXPECT_EQ(ReadBack(16 * kMiB + w * 4 * kMiB, 3 * kMiB),
              std::string(3 * kMiB, static_cast<char>('p' + w)));
  }
  // The writes went through io_uring, not the pwrite fallback.
  EXPECT_GT(submits_.load(), 0);
}

TEST_F(UringDeviceTest, RingIsNotReusedWithSQEsItNeverSubmitted) {
  FailSubmit(1, EAGAIN);  // the first batch is prepared, then refused
  AlignedBuffer failed = Filled(8 * kMiB, 'A');
  Status s = device_->Write(0, failed.data(), failed.size());
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("io_uring_submit"), std::string::npos) << s.message();
  // The caller owns its buffer again and reuses it.
  std::memset(failed.data(), 'Z', failed.size());

  ExpectNextWriteLands();
  // Nothing of the refused batch went out later, with whatever the buffer
  // held by then.
  EXPECT_EQ(ReadBack(0, 8 * kMiB), std::string(8 * kMiB, '\0'));
}

TEST_F(UringDeviceTest, RingIsNotReusedAfterASubmitFailedMidWrite) {
  // The first batch goes out; the second (what completed first, refilled)
  // is refused while the rest of the first may still be in flight.
  FailSubmit(2, EBUSY);
  AlignedBuffer failed = Filled(8 * kMiB, 'A');
  Status s = device_->Write(0, failed.data(), failed.size());
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  std::memset(failed.data(), 'Z', failed.size());

  ExpectNextWriteLands();
  // What was submitted completed before Write returned; what was refused
  // never reached the file.
  const std::string region = ReadBack(0, 8 * kMiB);
  EXPECT_EQ(region.find('Z'), std::string::npos) << "a refused chunk was written later";
  EXPECT_EQ(region.substr(0, kQueueDepth * kMiB), std::string(kQueueDepth * kMiB, 'A'));
}

TEST_F(UringDeviceTest, RingIsDrainedWhenItsWaitIsInterrupted) {
  // The first wait fails outright; the drain that follows is interrupted
  // once and must go on waiting, not hand the ring on with requests in it.
  FailWaits(1, 2, {EIO, EINTR});
  AlignedBuffer failed = Filled(8 * kMiB, 'A');
  Status s = device_->Write(0, failed.data(), failed.size());
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("io_uring_wait_cqe"), std::string::npos) << s.message();
  // Drained: everything submitted is on the file when Write returns.
  EXPECT_EQ(ReadBack(0, kQueueDepth * kMiB), std::string(kQueueDepth * kMiB, 'A'));

  ExpectNextWriteLands();
}

TEST_F(UringDeviceTest, RingThatCannotBeDrainedIsDropped) {
  // Every wait of the failed write fails: its requests cannot be reaped, so
  // its ring must not serve anyone again.
  FailWaits(1, 1000, {EIO});
  AlignedBuffer failed = Filled(8 * kMiB, 'A');
  Status s = device_->Write(0, failed.data(), failed.size());
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  CountOnly();  // from now on waits work

  ExpectNextWriteLands();
}

}  // namespace
}  // namespace ckptfs
