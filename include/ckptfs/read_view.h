// ReadView: the bytes of one read, lent rather than copied. Each slice
// points into a buffer the view keeps alive (a verified run in the read
// cache, a segment still in memory, a write waiting for its compressor, a
// block of zeros for a hole), so the FUSE edge hands them to the kernel
// with the one copy the kernel makes, and the core copies nothing.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

namespace ckptfs {

class ReadView {
 public:
  // Appends `len` bytes at `data`, valid while `owner` lives.
  void Add(const void* data, size_t len, std::shared_ptr<const void> owner) {
    if (len == 0) return;
    slices_.push_back({const_cast<void*>(data), len});
    owners_.push_back(std::move(owner));
    size_ += len;
  }

  const std::vector<iovec>& slices() const { return slices_; }
  size_t size() const { return size_; }

  // Copies the bytes, in order, to `dst` (at least size() bytes).
  void CopyTo(char* dst) const {
    for (const iovec& s : slices_) {
      std::memcpy(dst, s.iov_base, s.iov_len);
      dst += s.iov_len;
    }
  }

 private:
  std::vector<iovec> slices_;
  std::vector<std::shared_ptr<const void>> owners_;
  size_t size_ = 0;
};

}  // namespace ckptfs
