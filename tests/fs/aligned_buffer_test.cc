// The buffers O_DIRECT I/O goes through: aligned for it, zero-filled unless
// asked not to be, and those of a huge page or more aligned to one and
// advised to the kernel for huge pages (the flag the kernel shows for the
// mapping, whatever pages it could give).
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "util/aligned_buffer.h"

namespace ckptfs {
namespace {

constexpr size_t kMiB = 1 << 20;

// Whether every mapping of this process that overlaps [begin, end) is
// advised for huge pages ("hg" among its VmFlags in /proc/self/smaps), and
// at least one does.
bool AdvisedHugePages(uintptr_t begin, uintptr_t end) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool overlapping = false;
  int advised = 0;
  while (std::getline(smaps, line)) {
    uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash >> to && dash == '-') {
      overlapping = from < end && begin < to;
      continue;
    }
    if (!overlapping || line.rfind("VmFlags:", 0) != 0) continue;
    if (line.find(" hg") == std::string::npos) return false;
    ++advised;
  }
  return advised > 0;
}

TEST(AlignedBuffer, ASmallBufferIsBlockAlignedAndZeroed) {
  AlignedBuffer b(64 * 1024 + 100);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kBlockSize, 0u);
  for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b.data()[i], 0) << i;
}

TEST(AlignedBuffer, ABufferOfAHugePageOrMoreIsAlignedToOneAndAdvisedForHugePages) {
  for (size_t size : {2 * kMiB, 5 * kMiB + 4096, 32 * kMiB}) {
    AlignedBuffer b(size, /*zero=*/false);
    const auto at = reinterpret_cast<uintptr_t>(b.data());
    EXPECT_EQ(at % kHugePageSize, 0u) << size;
    EXPECT_TRUE(AdvisedHugePages(at, at + AlignDown(size, kHugePageSize))) << size;
    // Usable whole: the last byte too.
    b.data()[size - 1] = 1;
  }
}

}  // namespace
}  // namespace ckptfs
