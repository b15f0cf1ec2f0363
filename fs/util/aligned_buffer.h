// A heap buffer aligned for O_DIRECT I/O, owned and movable.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace ckptfs {

inline constexpr size_t kBlockSize = 4096;  // device block and O_DIRECT alignment

inline constexpr uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
inline constexpr uint64_t AlignDown(uint64_t v, uint64_t a) { return v / a * a; }

// Buffers of a huge page or more are aligned to one, and the kernel is
// asked to back them with huge pages (transparent huge pages in madvise
// mode, Debian's default). An O_DIRECT transfer through one then pins one
// page per 2 MiB instead of 512 and goes down as one block request instead
// of several (a virtio disk takes at most 254 segments a request), and a
// fresh buffer faults in once per 2 MiB (docs/tuning.md#huge-page-buffers).
inline constexpr size_t kHugePageSize = 2 << 20;
inline constexpr size_t DirectIoAlignment(size_t size) { return size >= kHugePageSize ? kHugePageSize : kBlockSize; }
// For memory aligned by DirectIoAlignment, before its first touch. Only
// advice: where the kernel has no huge page to give, small pages serve.
inline void AdviseHugePages(void* p, size_t size) {
  if (size >= kHugePageSize) (void)::madvise(p, AlignDown(size, kHugePageSize), MADV_HUGEPAGE);
}

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Allocates `size` bytes aligned to kBlockSize, zero-filled unless `zero`
  // is false (for buffers about to be overwritten). Throws std::bad_alloc,
  // which the FUSE edge turns into ENOMEM.
  explicit AlignedBuffer(size_t size, bool zero = true) : size_(size), capacity_(size) {
    void* p = nullptr;
    if (size > 0 && posix_memalign(&p, DirectIoAlignment(size), AlignUp(size, kBlockSize)) != 0) {
      throw std::bad_alloc();
    }
    AdviseHugePages(p, size);
    data_ = static_cast<char*>(p);
    if (data_ && zero) std::memset(data_, 0, AlignUp(size, kBlockSize));
  }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  // Reuses the allocation for `size` bytes (at most capacity(); contents
  // are whatever was there).
  void Resize(size_t size) { size_ = size <= capacity_ ? size : capacity_; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace ckptfs
