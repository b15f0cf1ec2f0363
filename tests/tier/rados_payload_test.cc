// RadosImage::Payload's checksum is the store's CRC32C (crc32c::Value),
// though librados' bufferlist computes it, for any length and alignment.
#include <gtest/gtest.h>

#include <string>

#include "rados_image.h"
#include "util/crc32c.h"

namespace ckptfs {
namespace {

TEST(RadosPayloadTest, ChecksumIsTheStoresCrc32c) {
  std::string bytes(4 << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  for (size_t offset : {size_t{0}, size_t{1}, size_t{4096}}) {
    for (size_t len : {size_t{0}, size_t{1}, size_t{4095}, size_t{1} << 20, (size_t{4} << 20) - 4096}) {
      RadosImage::Payload payload(bytes.data() + offset, len);
      EXPECT_EQ(payload.Crc32c(), crc32c::Value(bytes.data() + offset, len)) << offset << " " << len;
      // Asked again, the buffer's remembered value: still the same.
      EXPECT_EQ(payload.Crc32c(), crc32c::Value(bytes.data() + offset, len)) << offset << " " << len;
    }
  }
  // The well-known check value of CRC32C.
  EXPECT_EQ(RadosImage::Payload("123456789", 9).Crc32c(), 0xE3069283u);
}

}  // namespace
}  // namespace ckptfs
