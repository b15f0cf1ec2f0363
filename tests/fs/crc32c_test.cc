// CRC32C against the published check value and between code paths.
#include "util/crc32c.h"

#include <gtest/gtest.h>

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

TEST(Crc32c, SingleBitFlipChangesValue) {
  std::string data(4096, 'x');
  uint32_t before = crc32c::Value(data.data(), data.size());
  data[2000] ^= 0x10;
  EXPECT_NE(before, crc32c::Value(data.data(), data.size()));
}

}  // namespace
}  // namespace ckptfs
