// RadosImageDevice against the real cluster, on an image made by hand: a
// range one read of one object returns whole is lent in the reply's own
// memory, with the checksum the messenger kept, and stays valid as long as
// it is held; a range the image fills with zeros somewhere (a gap between
// chunks, an object shorter than its chunks, a segment the image does not
// hold) is not lent, and Read gives its bytes and zeros.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceph_cluster.h"
#include "format/physical_extent.h"
#include "format/superblock.h"
#include "image_manifest.h"
#include "librados_image.h"
#include "rados_image_device.h"
#include "rados_target.h"
#include "util/crc32c.h"

namespace ckptfs {
namespace {

using testing::CephCluster;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kSegment = 2 << 20;

Result<std::unique_ptr<RadosImage>> OpenImage(const std::string& image) {
  CKPTFS_ASSIGN_OR_RETURN(RadosTarget target,
                          ParseRadosSpec("rados:" + std::string(CephCluster::kPool) + "/" + image,
                                         CephCluster::Conf(), "", /*timeout_seconds=*/30));
  return LibradosImage::Open(target);
}

std::string RandomBytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(gen());
  return s;
}

ImageChunk Chunk(const std::string& object, uint32_t offset, uint32_t length) {
  return ImageChunk{offset, length, crc32c::Value(object.data() + offset, length)};
}

class RadosImageDeviceTest : public ::testing::Test {
 protected:
  // Segment 0 is object 1: chunks [0, 64K) and [64K, 128K) end to end, then
  // a gap, then [256K, 320K). Segment 1 is object 2, whose chunk names 128
  // KiB but which holds 100. Segment 2 is not in the image.
  void SetUp() override {
    image_ = "device-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    auto writer = OpenImage(image_);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    seg0_ = RandomBytes(320 * kKiB, 1);
    seg1_ = RandomBytes(100 * kKiB, 2);
    ASSERT_TRUE((*writer)->WriteWhole(ImageManifest::ObjectName(0, 1), seg0_).ok());
    ASSERT_TRUE((*writer)->WriteWhole(ImageManifest::ObjectName(1, 2), seg1_).ok());

    Superblock sb;
    sb.segment_size = kSegment;
    sb.segment_count = 4;
    sb.device_size = kDataStart + 4 * kSegment;
    sb.store_id = 77;
    ImageManifest m;
    m.store_id = sb.store_id;
    m.publish_seq = 1;
    m.next_object_id = 3;
    m.superblock.assign(4096, '\0');
    sb.EncodeTo(m.superblock.data());
    m.segments.push_back({0, 1, {Chunk(seg0_, 0, 64 * kKiB), Chunk(seg0_, 64 * kKiB, 64 * kKiB),
                                 Chunk(seg0_, 256 * kKiB, 64 * kKiB)}});
    const std::string padded = seg1_ + std::string(28 * kKiB, '\0');
    m.segments.push_back({1, 2, {Chunk(padded, 0, 128 * kKiB)}});
    ASSERT_TRUE((*writer)->WriteWhole(ImageManifest::kObject, m.Encode()).ok());

    auto reader = OpenImage(image_);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto device = RadosImageDevice::Open(std::move(*reader));
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = std::move(*device);
  }

  void TearDown() override {
    device_.reset();
    auto image = OpenImage(image_);
    if (!image.ok()) return;
    auto names = (*image)->List();
    if (names.ok()) {
      for (const std::string& name : *names) (void)(*image)->Remove(name);
    }
  }

  // What Read returns for the range.
  std::string ReadBytes(uint64_t offset, size_t len) {
    std::string out(len, 'x');
    Status s = device_->Read(offset, out.data(), len);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  static uint64_t At(uint32_t segment, uint64_t offset) { return kDataStart + segment * kSegment + offset; }

  std::string image_;
  std::string seg0_, seg1_;
  std::unique_ptr<RadosImageDevice> device_;
};

TEST_F(RadosImageDeviceTest, LendsARangeOfChunksEndToEndWithItsChecksum) {
  // Across the cut between the first two chunks, and inside the third.
  for (auto [offset, len] : {std::pair<uint64_t, size_t>{0, 128 * kKiB}, {60 * kKiB, 8 * kKiB},
                             {260 * kKiB, 12 * kKiB}}) {
    auto lent = device_->ReadLent(At(0, offset), len);
    ASSERT_TRUE(lent.ok()) << lent.status().ToString();
    ASSERT_TRUE(lent->owner) << "not lent: " << offset;
    ASSERT_EQ(lent->size, len);
    const std::string want = seg0_.substr(offset, len);
    EXPECT_TRUE(std::string(lent->data, lent->size) == want) << offset;
    ASSERT_TRUE(lent->crc32c.has_value()) << offset;
    EXPECT_EQ(*lent->crc32c, crc32c::Value(want.data(), want.size())) << offset;
    EXPECT_TRUE(ReadBytes(At(0, offset), len) == want) << offset;
  }
  EXPECT_EQ(device_->remote_counters().reads, 6u);  // each range once lent, once read
}

TEST_F(RadosImageDeviceTest, AnEvictedRunsObjectIsLentToo) {
  auto lent = device_->ReadLent(PhysicalExtent::RemoteAddress(1, 64 * kKiB), 16 * kKiB);
  ASSERT_TRUE(lent.ok()) << lent.status().ToString();
  ASSERT_TRUE(lent->owner);
  EXPECT_TRUE(std::string(lent->data, lent->size) == seg0_.substr(64 * kKiB, 16 * kKiB));
}

TEST_F(RadosImageDeviceTest, LentBytesOutliveTheDevice) {
  auto lent = device_->ReadLent(At(0, 0), 64 * kKiB);
  ASSERT_TRUE(lent.ok() && lent->owner);
  device_.reset();  // and the connection with it
  EXPECT_TRUE(std::string(lent->data, lent->size) == seg0_.substr(0, 64 * kKiB));
}

TEST_F(RadosImageDeviceTest, RangesWithZerosInThemAreReadNotLent) {
  struct Case {
    const char* what;
    uint64_t offset;
    size_t len;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"across the gap between chunks", At(0, 120 * kKiB), 16 * kKiB,
       seg0_.substr(120 * kKiB, 8 * kKiB) + std::string(8 * kKiB, '\0')},
      {"past the end of an object shorter than its chunk", At(1, 96 * kKiB), 8 * kKiB,
       seg1_.substr(96 * kKiB) + std::string(4 * kKiB, '\0')},
      {"in a segment the image does not hold", At(2, 0), 4 * kKiB, std::string(4 * kKiB, '\0')},
      {"across two segments", At(0, kSegment - 4 * kKiB), 8 * kKiB, std::string(4 * kKiB, '\0') + seg1_.substr(0, 4 * kKiB)},
  };
  for (const Case& c : cases) {
    auto lent = device_->ReadLent(c.offset, c.len);
    ASSERT_TRUE(lent.ok()) << c.what << ": " << lent.status().ToString();
    EXPECT_FALSE(lent->owner) << c.what << " was lent";
    EXPECT_TRUE(ReadBytes(c.offset, c.len) == c.want) << c.what;
  }
}

}  // namespace
}  // namespace ckptfs
