// RadosImage::Payload's checksum is the store's CRC32C (crc32c::Value),
// though librados' bufferlist computes it, for any length, and never one
// of the buffer's earlier contents; and a payload holds its SendBuffer.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "rados_image.h"
#include "util/crc32c.h"

namespace ckptfs {
namespace {

TEST(RadosPayloadTest, ChecksumIsTheStoresCrc32c) {
  std::string bytes(4 << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  RadosImage::SendBuffer buffer(bytes.size());
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  for (size_t len : {size_t{0}, size_t{1}, size_t{4095}, size_t{1} << 20, (size_t{4} << 20) - 4096}) {
    RadosImage::Payload payload(&buffer, len);
    EXPECT_EQ(payload.Crc32c(), crc32c::Value(bytes.data(), len)) << len;
    // Asked again, the buffer's remembered value: still the same.
    EXPECT_EQ(payload.Crc32c(), crc32c::Value(bytes.data(), len)) << len;
  }
  // The well-known check value of CRC32C.
  std::memcpy(buffer.data(), "123456789", 9);
  EXPECT_EQ(RadosImage::Payload(&buffer, 9).Crc32c(), 0xE3069283u);
}

TEST(RadosPayloadTest, ABufferFilledAgainIsNotSentWithItsEarlierChecksum) {
  RadosImage::SendBuffer buffer(1 << 20);
  std::memset(buffer.data(), 'a', buffer.size());
  const uint32_t first = RadosImage::Payload(&buffer, buffer.size()).Crc32c();
  EXPECT_EQ(first, crc32c::Value(buffer.data(), buffer.size()));
  std::memset(buffer.data(), 'b', buffer.size());
  // Same buffer, offset and length as the payload before: a checksum kept
  // from then would be the old bytes'.
  EXPECT_EQ(RadosImage::Payload(&buffer, buffer.size()).Crc32c(), crc32c::Value(buffer.data(), buffer.size()));
}

TEST(RadosPayloadTest, APayloadHoldsItsBufferUntilItGoes) {
  RadosImage::SendBuffer buffer(64 << 10);
  EXPECT_FALSE(buffer.InUse());
  {
    RadosImage::Payload payload(&buffer, 4096);
    EXPECT_TRUE(buffer.InUse());
    RadosImage::Payload moved = std::move(payload);
    EXPECT_TRUE(buffer.InUse());
  }
  EXPECT_FALSE(buffer.InUse());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % 4096, 0u) << "O_DIRECT reads fill it";
}

}  // namespace
}  // namespace ckptfs
