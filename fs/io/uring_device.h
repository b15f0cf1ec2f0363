// UringDevice: FileDevice whose large writes go through io_uring, split into
// chunks kept in flight together so one segment write fills the device queue.
#pragma once

#include <liburing.h>

#include <memory>
#include <mutex>
#include <vector>

#include "io/file_device.h"

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

 private:
  // A ring is used by one thread at a time: callers borrow one from the pool,
  // so concurrent writers each drive their own ring and never contend on it.
  struct Ring {
    io_uring ring;
  };
  std::unique_ptr<Ring> BorrowRing(Status* status);
  void ReturnRing(std::unique_ptr<Ring> ring);

  static constexpr size_t kChunkBytes = 1 << 20;

  const std::unique_ptr<FileDevice> file_;
  const unsigned queue_depth_;
  std::mutex pool_mu_;                       // guards free_rings_
  std::vector<std::unique_ptr<Ring>> free_rings_;
};

}  // namespace ckptfs
