// What a tier is told to copy: the written ranges of each segment
// incarnation (WriteTrackingDevice) and the committed image of a store
// (CommittedImages), checked against the store's own bytes.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "borrowed_device.h"
#include "ckptfs/filesystem.h"
#include "format/superblock.h"
#include "io/memory_device.h"
#include "io/write_tracking_device.h"
#include "open_device.h"
#include "util/aligned_buffer.h"

namespace ckptfs {
namespace {

constexpr uint64_t kSegment = 2 << 20;
constexpr uint64_t kDataStart = 1 << 20;

using Borrowed = testing::BorrowedDevice;

AlignedBuffer Filled(size_t n, char c) {
  AlignedBuffer b(n, /*zero=*/false);
  std::memset(b.data(), c, n);
  return b;
}

TEST(WriteTrackingDeviceTest, RecordsMergedRangesPerIncarnation) {
  WriteTrackingDevice dev(std::make_unique<MemoryDevice>(kDataStart + 8 * kSegment), kDataStart, kSegment, 8);
  const uint64_t seg2 = kDataStart + 2 * kSegment;
  AlignedBuffer a = Filled(8192, 'a');
  ASSERT_TRUE(dev.Write(seg2, a.data(), 8192).ok());
  ASSERT_TRUE(dev.Write(seg2 + 8192, a.data(), 4096).ok());      // extends
  ASSERT_TRUE(dev.Write(seg2 + 65536, a.data(), 4096).ok());     // a gap
  ASSERT_TRUE(dev.Write(seg2 + 61440, a.data(), 8192).ok());     // bridges into it
  ASSERT_TRUE(dev.Write(0, a.data(), 4096).ok());                // superblock: not a segment
  SegmentImage s = dev.Written(2);
  EXPECT_EQ(s.incarnation, 0u) << "in use since the device was opened";
  ASSERT_EQ(s.ranges.size(), 2u);
  EXPECT_EQ(s.ranges[0], (ByteRange{0, 12288}));
  EXPECT_EQ(s.ranges[1], (ByteRange{61440, 8192}));
  // A write across a segment boundary is split between the two.
  AlignedBuffer big = Filled(3 * 4096, 'b');
  ASSERT_TRUE(dev.Write(kDataStart + 4 * kSegment - 4096, big.data(), big.size()).ok());
  EXPECT_EQ(dev.Written(3).ranges, (std::vector<ByteRange>{{kSegment - 4096, 4096}}));
  EXPECT_EQ(dev.Written(4).ranges, (std::vector<ByteRange>{{0, 8192}}));

  // Handing the segment out again starts a new incarnation with nothing.
  const uint64_t old = dev.Incarnation(2);
  ASSERT_TRUE(dev.Provision(seg2, kSegment).ok());
  const uint64_t fresh = dev.Incarnation(2);
  EXPECT_NE(fresh, old);
  EXPECT_TRUE(dev.Written(2).ranges.empty());
  AlignedBuffer out(4096);
  auto stale = dev.ReadIfUnchanged(2, old, 0, out.data(), 4096);
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(*stale) << "a read of the old incarnation must be refused";
  auto current = dev.ReadIfUnchanged(2, fresh, 0, out.data(), 4096);
  ASSERT_TRUE(current.ok());
  EXPECT_TRUE(*current);
  EXPECT_EQ(out.data()[0], 'a');
  // Provisioning a partial range (not a hand-out) changes nothing.
  ASSERT_TRUE(dev.Provision(seg2, 4096).ok());
  EXPECT_EQ(dev.Incarnation(2), fresh);
}

class CommittedImagesTest : public ::testing::Test {
 protected:
  CommittedImagesTest() : device_(kDataStart + 32 * kSegment) {
    FormatOptions format;
    format.segment_size = kSegment;
    EXPECT_TRUE(FormatDevice(&device_, format).ok());
  }
  std::unique_ptr<FileSystem> Open() {
    MountOptions options;
    options.memory_budget = 8 << 20;
    options.commit_interval_ms = 60000;  // only the test's syncs commit
    options.track_committed_images = true;
    auto opened = OpenFileSystemOnDevice(std::make_unique<Borrowed>(&device_), options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return nullptr;
    auto fs = std::move(opened).value();
    fs->Start();
    return fs;
  }
  // The bytes of `image` read from the device: what a copy would hold.
  std::string ImageBytes(const CommittedImage& image, uint32_t segment, const ByteRange& r) {
    AlignedBuffer b(r.length);
    EXPECT_TRUE(device_.Read(image.data_start + segment * image.segment_size + r.offset, b.data(), r.length).ok());
    return std::string(b.data(), r.length);
  }
  MemoryDevice device_;
};

TEST_F(CommittedImagesTest, TheImageHoldsTheLogAndTheDataOfTheLastCommit) {
  auto fs = Open();
  ASSERT_TRUE(fs);
  CommittedImageSource* source = fs->committed_images();
  ASSERT_NE(source, nullptr);
  const uint64_t lsn_at_open = source->CommittedLsn();
  EXPECT_GE(lsn_at_open, 1u) << "mkfs wrote the first log block";

  const std::string content(3 * kSegment, 'c');
  auto file = fs->Create(1, "ckpt", 0644, 0, 0);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(fs->Write(file->st_ino, 0, content.data(), content.size()).ok());
  fs->Forget(file->st_ino, 1);
  ASSERT_TRUE(fs->Sync().ok());
  auto image = source->CaptureCommitted();
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_GT(image->commit_lsn, lsn_at_open);
  EXPECT_EQ(image->commit_lsn, source->CommittedLsn());
  auto sb = Superblock::Decode(image->superblock.data());
  ASSERT_TRUE(sb.ok());
  EXPECT_EQ(sb->store_id, image->store_id);
  EXPECT_EQ(image->segment_size, kSegment);

  // Every byte of the file is in some segment range of the image, and the
  // log's head segment is there with its blocks.
  uint64_t data_bytes = 0;
  bool has_log_head = false;
  for (const SegmentImage& s : image->segments) {
    if (s.segment == sb->log_head_segment) {
      has_log_head = true;
      ASSERT_FALSE(s.ranges.empty());
      EXPECT_EQ(s.ranges[0].offset, 0u);
      continue;
    }
    for (const ByteRange& r : s.ranges) {
      const std::string bytes = ImageBytes(*image, s.segment, r);
      data_bytes += std::count(bytes.begin(), bytes.end(), 'c');
    }
  }
  EXPECT_TRUE(has_log_head);
  EXPECT_EQ(data_bytes, content.size());

  // Deleting the file and writing more reuses its segments: their new
  // incarnations differ, and the old ones can no longer be read.
  std::map<uint32_t, uint64_t> before;
  for (const SegmentImage& s : image->segments) before[s.segment] = s.incarnation;
  ASSERT_TRUE(fs->Unlink(1, "ckpt").ok());
  ASSERT_TRUE(fs->Sync().ok());
  // Allocation goes round the store, so 40 one-segment files (each deleted
  // when the next is written) come back to the file's segments.
  for (int i = 0; i < 40; ++i) {
    auto f = fs->Create(1, "next" + std::to_string(i), 0644, 0, 0);
    ASSERT_TRUE(f.ok());
    auto w = fs->Write(f->st_ino, 0, content.data(), kSegment);
    ASSERT_TRUE(w.ok()) << "file " << i << ": " << w.status().ToString();
    fs->Forget(f->st_ino, 1);  // as the kernel would: only the name keeps it
    ASSERT_TRUE(fs->Sync().ok());
    if (i > 0) {
      ASSERT_TRUE(fs->Unlink(1, "next" + std::to_string(i - 1)).ok());
    }
  }
  ASSERT_TRUE(fs->Sync().ok());
  int reused = 0;
  AlignedBuffer buf(4096);
  for (const auto& [segment, incarnation] : before) {
    if (segment == sb->log_head_segment) continue;  // still the log's
    auto old = source->ReadSegment(segment, incarnation, 0, buf.data(), 4096);
    ASSERT_TRUE(old.ok());
    if (!*old) ++reused;
  }
  EXPECT_EQ(reused, static_cast<int>(before.size()) - 1)
      << "every data segment of the deleted file was handed out again; its old bytes are gone";
  const uint64_t lsn_before_close = source->CommittedLsn();
  ASSERT_TRUE(fs->Close().ok());
  fs.reset();

  // After a remount the lsn goes on, and segments in use since before are
  // in incarnation 0, whole.
  fs = Open();
  ASSERT_TRUE(fs);
  EXPECT_GE(fs->committed_images()->CommittedLsn(), lsn_before_close);
  auto reopened = fs->committed_images()->CaptureCommitted();
  ASSERT_TRUE(reopened.ok());
  for (const SegmentImage& s : reopened->segments) {
    EXPECT_EQ(s.incarnation, 0u);
    if (s.segment != Superblock::Decode(reopened->superblock.data())->log_head_segment) {
      EXPECT_EQ(s.ranges, (std::vector<ByteRange>{{0, kSegment}}));
    }
  }
  ASSERT_TRUE(fs->Close().ok());
}

TEST_F(CommittedImagesTest, NotTrackedUnlessAsked) {
  MountOptions options;
  auto opened = OpenFileSystemOnDevice(std::make_unique<Borrowed>(&device_), options);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ((*opened)->committed_images(), nullptr);
  ASSERT_TRUE((*opened)->Close().ok());
}

}  // namespace
}  // namespace ckptfs
