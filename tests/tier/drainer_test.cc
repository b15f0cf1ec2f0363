// The Drainer against the real cluster, in cases a mount meets only by
// chance: what a resumed drain adopts from the published image must be what
// the segment's current use wrote (a segment handed out again before the
// first capture still holds its old bytes past that), and a drain given a
// deadline starts no write after it. The store side is a segment held in
// memory whose incarnation, written ranges and bytes the test sets.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "ceph_cluster.h"
#include "drainer.h"
#include "rados_image.h"
#include "rados_target.h"
#include "util/mutex.h"

namespace ckptfs {
namespace {

using testing::CephCluster;

constexpr uint64_t kSegmentBytes = 8 << 20;
constexpr uint32_t kSegment = 1;
constexpr uint64_t kStoreId = 0x5eed0001;

std::string Bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(gen());
  return s;
}

// One data segment in memory, as the local store would capture it.
class ScriptedSegment : public CommittedImageSource {
 public:
  ScriptedSegment() : bytes_(kSegmentBytes, '\0') {}

  // The segment's state at a new commit.
  void Commit(uint64_t incarnation, std::vector<ByteRange> written, uint64_t offset, const std::string& data)
      EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    incarnation_ = incarnation;
    written_ = std::move(written);
    std::memcpy(bytes_.data() + offset, data.data(), data.size());
    ++commit_lsn_;
  }

  Result<CommittedImage> CaptureCommitted() override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    CommittedImage image;
    image.superblock.assign(4096, '\0');
    image.store_id = kStoreId;
    image.data_start = 1 << 20;
    image.segment_size = kSegmentBytes;
    image.segment_count = 4;
    image.commit_lsn = commit_lsn_;
    image.segments.push_back(SegmentImage{kSegment, incarnation_, written_});
    return image;
  }
  uint64_t CommittedLsn() const override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return commit_lsn_;
  }
  uint64_t BytesWritten() const override { return 0; }
  bool SpaceIsLow() const override { return false; }
  Result<bool> ReadSegment(uint32_t segment, uint64_t incarnation, uint64_t offset, void* buf,
                           size_t len) override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (segment != kSegment || incarnation != incarnation_) return false;
    std::memcpy(buf, bytes_.data() + offset, len);
    return true;
  }
  void AttachTier(RemoteTier*) override {}

 private:
  mutable Mutex mu_;
  std::string bytes_ GUARDED_BY(mu_);
  uint64_t incarnation_ GUARDED_BY(mu_) = 0;
  std::vector<ByteRange> written_ GUARDED_BY(mu_);
  uint64_t commit_lsn_ GUARDED_BY(mu_) = 0;
};

Result<std::unique_ptr<Drainer>> OpenDrainer(const std::string& image, ScriptedSegment* source) {
  CKPTFS_ASSIGN_OR_RETURN(RadosTarget target, ParseRadosSpec("rados:" + std::string(CephCluster::kPool) + "/" +
                                                                 image, CephCluster::Conf(), "", 30));
  CKPTFS_ASSIGN_OR_RETURN(std::unique_ptr<RadosImage> rados, RadosImage::Open(target));
  DrainOptions options;
  options.busy_bytes_per_second = 0;  // no burst to wait for
  return Drainer::Open(std::move(rados), source, kStoreId, options);
}

TEST(DrainerTest, ASegmentHandedOutAgainIsAdoptedOnlyAsFarAsItsNewUseWrote) {
  const std::string image = CephCluster::UniqueImage("resume");
  const std::string old_bytes = Bytes(kSegmentBytes, 1);
  ScriptedSegment source;
  // The first daemon drains the segment's first use, whole.
  source.Commit(5, {{0, kSegmentBytes}}, 0, old_bytes);
  {
    auto first = OpenDrainer(image, &source);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    ASSERT_TRUE((*first)->DrainUntil(0, std::chrono::seconds(60)).ok());
    (*first)->Stop();
  }

  // The segment is handed out again and its new use writes its first 2 MiB
  // with the same bytes as before; the rest of it still holds the old ones.
  source.Commit(7, {{0, 2 << 20}}, 0, old_bytes.substr(0, 2 << 20));
  auto second = OpenDrainer(image, &source);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  Drainer& drainer = **second;
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  EXPECT_EQ(drainer.Stats().adopted_bytes, 2u << 20);

  // Then it writes the rest with new bytes: the image must get them.
  const std::string new_bytes = Bytes(kSegmentBytes - (2 << 20), 2);
  source.Commit(7, {{0, kSegmentBytes}}, 2 << 20, new_bytes);
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  std::optional<RemoteSegment> held = drainer.Published(kSegment, 7);
  ASSERT_TRUE(held.has_value());
  ASSERT_EQ(held->ranges, (std::vector<ByteRange>{{0, kSegmentBytes}}));
  std::string got(kSegmentBytes, '\0');
  ASSERT_TRUE(drainer.ReadRemote(held->object, 0, got.data(), got.size()).ok());
  EXPECT_TRUE(got.compare(0, 2 << 20, old_bytes, 0, 2 << 20) == 0);
  EXPECT_TRUE(got.compare(2 << 20, new_bytes.size(), new_bytes) == 0) << "the image kept the segment's old bytes";
  drainer.Stop();
}

TEST(DrainerTest, ADrainPastItsDeadlineStartsNoWriteAndTheNextOneSendsEverything) {
  const std::string image = CephCluster::UniqueImage("deadline");
  ScriptedSegment source;
  const std::string bytes = Bytes(kSegmentBytes, 3);
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  auto opened = OpenDrainer(image, &source);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Drainer& drainer = **opened;
  Status late = drainer.DrainUntil(0, std::chrono::milliseconds(0));
  EXPECT_TRUE(late.IsBusy()) << late.ToString();
  EXPECT_EQ(drainer.Stats().uploaded_bytes, 0u);
  EXPECT_FALSE(drainer.Stats().published);
  // The deadline was that call's alone.
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  EXPECT_EQ(drainer.Stats().uploaded_bytes, kSegmentBytes);
  std::optional<RemoteSegment> held = drainer.Published(kSegment, 1);
  ASSERT_TRUE(held.has_value());
  std::string got(kSegmentBytes, '\0');
  ASSERT_TRUE(drainer.ReadRemote(held->object, 0, got.data(), got.size()).ok());
  EXPECT_TRUE(got == bytes);
  drainer.Stop();
}

}  // namespace
}  // namespace ckptfs
