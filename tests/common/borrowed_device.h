// BorrowedDevice: hands a device the test owns to a filesystem (which takes
// ownership of what it is given) while the test keeps using it: to look at
// its bytes, arm it, or open the store on it again.
#pragma once

#include "io/block_device.h"

namespace ckptfs::testing {

class BorrowedDevice : public BlockDevice {
 public:
  explicit BorrowedDevice(BlockDevice* d) : d_(d) {}
  Status Read(uint64_t o, void* b, size_t l) override { return d_->Read(o, b, l); }
  Status Write(uint64_t o, const void* b, size_t l) override { return d_->Write(o, b, l); }
  Status Flush() override { return d_->Flush(); }
  uint64_t size() const override { return d_->size(); }

 private:
  BlockDevice* d_;
};

}  // namespace ckptfs::testing
