// CRC32C against the published check value and between code paths.
#include "util/crc32c.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <string>

namespace ckptfs {
namespace {

TEST(Crc32c, StandardCheckValue) {
  // The CRC-32C catalogue's check value for "123456789".
  EXPECT_EQ(crc32c::Value("123456789", 9), 0xE3069283u);
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string data(10007, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + 7);
  uint32_t whole = crc32c::Value(data.data(), data.size());
  uint32_t parts = crc32c::Extend(crc32c::Value(data.data(), 4099), data.data() + 4099,
                                  data.size() - 4099);
  EXPECT_EQ(whole, parts);
}

// Long inputs, at odd lengths and alignments, against a bytewise table CRC.
TEST(Crc32c, LongInputsMatchBytewiseReference) {
  uint32_t table[256];
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78 : c >> 1;
    table[i] = c;
  }
  std::string data(3 << 20, '\0');
  uint64_t x = 12345;
  for (char& ch : data) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    ch = static_cast<char>(x >> 56);
  }
  for (size_t n : {24575ul, 24576ul, 24577ul, 49152ul + 13, 1ul << 20, 3ul << 20}) {
    for (size_t start : {0ul, 3ul}) {
      if (start + n > data.size()) continue;
      uint32_t c = ~0u;
      for (size_t i = start; i < start + n; ++i) {
        c = table[(c ^ static_cast<uint8_t>(data[i])) & 0xFF] ^ (c >> 8);
      }
      ASSERT_EQ(crc32c::Value(data.data() + start, n), ~c) << n << " bytes at +" << start;
    }
  }
}

// ISA-L takes an int length, so longer inputs are fed to it in pieces; the
// reference is the same bytes as 1 MiB calls. The mapping reads as zero
// pages and costs no memory.
TEST(Crc32c, LengthBeyondIntMax) {
  const size_t n = (size_t{1} << 31) + 4096 + 5;
  void* m = mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  madvise(m, n, MADV_HUGEPAGE);  // fewer faults where huge zero pages exist
  const auto* p = static_cast<const char*>(m);
  uint32_t pieces = 0;
  for (size_t off = 0; off < n; off += 1 << 20) {
    pieces = crc32c::Extend(pieces, p + off, std::min<size_t>(1 << 20, n - off));
  }
  EXPECT_EQ(crc32c::Value(p, n), pieces);
  munmap(m, n);
}

TEST(Crc32c, SingleBitFlipChangesValue) {
  std::string data(4096, 'x');
  uint32_t before = crc32c::Value(data.data(), data.size());
  data[2000] ^= 0x10;
  EXPECT_NE(before, crc32c::Value(data.data(), data.size()));
}

}  // namespace
}  // namespace ckptfs
