// MemoryDevice implementation.
#include "io/memory_device.h"

#include <cstring>

#include "util/aligned_buffer.h"

namespace ckptfs {

MemoryDevice::MemoryDevice(uint64_t size)
    : size_(AlignDown(size, kBlockSize)), bytes_(size_, 0) {}

Status MemoryDevice::Check(uint64_t offset, const void* buf, size_t len) const {
  if (offset % kBlockSize || len % kBlockSize || reinterpret_cast<uintptr_t>(buf) % kBlockSize) {
    return Status::Invalid("unaligned I/O at " + std::to_string(offset) + " len " +
                           std::to_string(len));
  }
  if (offset + len > size_) {
    return Status::IOError("I/O past end of device at " + std::to_string(offset));
  }
  return Status::Ok();
}

Status MemoryDevice::Read(uint64_t offset, void* buf, size_t len) {
  MutexLock lock(&mu_);
  CKPTFS_RETURN_IF_ERROR(Check(offset, buf, len));
  std::memcpy(buf, bytes_.data() + offset, len);
  return Status::Ok();
}

Status MemoryDevice::Write(uint64_t offset, const void* buf, size_t len) {
  MutexLock lock(&mu_);
  CKPTFS_RETURN_IF_ERROR(Check(offset, buf, len));
  std::memcpy(bytes_.data() + offset, buf, len);
  return Status::Ok();
}

Status MemoryDevice::Flush() {
  MutexLock lock(&mu_);
  ++flushes_;
  return Status::Ok();
}

uint64_t MemoryDevice::flush_count() const {
  MutexLock lock(&mu_);
  return flushes_;
}

}  // namespace ckptfs
