// UringDevice: FileDevice whose large writes go through io_uring, split into
// chunks kept in flight together so one segment write fills the device queue.
#pragma once

#include <liburing.h>

#include <functional>
#include <memory>
#include <vector>

#include "io/file_device.h"
#include "util/mutex.h"

namespace ckptfs {

class UringDevice : public BlockDevice {
 public:
  UringDevice(std::unique_ptr<FileDevice> file, unsigned queue_depth);
  ~UringDevice() override;

  Status Read(uint64_t offset, void* buf, size_t len) override { return file_->Read(offset, buf, len); }
  Status Write(uint64_t offset, const void* buf, size_t len) override;
  Status Flush() override { return file_->Flush(); }
  uint64_t size() const override { return file_->size(); }
  Status Provision(uint64_t offset, uint64_t len) override { return file_->Provision(offset, len); }
  uint64_t ProvisionShortfall() const override { return file_->ProvisionShortfall(); }

  // Test seam (tests/fs/uring_device_test.cc): stand-ins for io_uring_submit
  // and io_uring_wait_cqe on the ring a write borrowed, so a test can make
  // them fail as the kernel may. Empty members mean the real call. Set before
  // the first Write; not synchronized with writes in progress.
  struct RingCalls {
    std::function<int(io_uring* ring)> submit;
    std::function<int(io_uring* ring, io_uring_cqe** cqe)> wait_cqe;
  };
  void SetRingCallsForTest(RingCalls calls) { calls_ = std::move(calls); }

 private:
  // A ring is used by one thread at a time: callers borrow one from the pool,
  // so concurrent writers each drive their own ring and never contend on it.
  struct Ring {
    io_uring ring;
  };
  std::unique_ptr<Ring> BorrowRing(Status* status);
  // Pools `ring` if it is clean (nothing prepared and unsubmitted, none of
  // `in_flight` requests left, no completion unreaped), otherwise destroys
  // it: a later user must never see its requests.
  void ReturnRing(std::unique_ptr<Ring> ring, unsigned in_flight);
  int Submit(Ring* ring);
  int WaitCqe(Ring* ring, io_uring_cqe** cqe);

  static constexpr size_t kChunkBytes = 1 << 20;

  const std::unique_ptr<FileDevice> file_;
  const unsigned queue_depth_;
  Mutex pool_mu_;
  std::vector<std::unique_ptr<Ring>> free_rings_ GUARDED_BY(pool_mu_);  // each one clean
  RingCalls calls_;
};

}  // namespace ckptfs
