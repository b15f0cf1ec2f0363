// MemoryDevice: a BlockDevice held in RAM, for fast unit tests of the log,
// segments and replay. It checks the alignment contract like O_DIRECT would.
#pragma once

#include <vector>

#include "io/block_device.h"
#include "util/mutex.h"

namespace ckptfs {

class MemoryDevice : public BlockDevice {
 public:
  explicit MemoryDevice(uint64_t size);

  Status Read(uint64_t offset, void* buf, size_t len) override;
  Status Write(uint64_t offset, const void* buf, size_t len) override;
  Status Flush() override;
  uint64_t size() const override { return size_; }

  // Test access to the raw image (e.g. to flip a bit).
  // Unlocked: tests use it while no I/O runs.
  std::vector<char>& bytes() NO_THREAD_SAFETY_ANALYSIS { return bytes_; }
  uint64_t flush_count() const;

 private:
  Status Check(uint64_t offset, const void* buf, size_t len) const;

  const uint64_t size_;  // the image never grows or shrinks
  mutable Mutex mu_;
  std::vector<char> bytes_ GUARDED_BY(mu_);  // the contents; the size never changes
  uint64_t flushes_ GUARDED_BY(mu_) = 0;
};

}  // namespace ckptfs
