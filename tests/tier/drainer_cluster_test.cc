// The drain protocol's tests (drain_protocol_test.cc) against the real
// cluster, and what only a cluster shows: OSDs that hang with writes in
// their sockets, which land once they go on.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ceph_cluster.h"
#include "drain_protocol.h"
#include "file_util.h"
#include "librados_image.h"
#include "rados_target.h"

namespace ckptfs {
namespace {

using testing::CephCluster;
using testing::DrainerTest;
using testing::kSegment;
using testing::kSegmentBytes;
using testing::kStoreId;
using testing::Random;
using testing::ReadBack;
using testing::ScriptedSegment;

class ClusterBackend : public testing::ImageBackend {
 public:
  std::string UniqueImage(const std::string& stem) override { return CephCluster::UniqueImage(stem); }
  Result<std::unique_ptr<RadosImage>> Open(const std::string& image, unsigned timeout_seconds) override {
    CKPTFS_ASSIGN_OR_RETURN(RadosTarget target,
                            ParseRadosSpec("rados:" + std::string(CephCluster::kPool) + "/" + image,
                                           CephCluster::Conf(), "", timeout_seconds));
    return LibradosImage::Open(target);
  }
};

INSTANTIATE_TEST_SUITE_P(Cluster, DrainerTest,
                         ::testing::Values(testing::BackendParam{
                             "Cluster", [] { return std::make_unique<ClusterBackend>(); }}),
                         [](const auto& info) { return info.param.name; });

class DrainerClusterTest : public DrainerTest {
 public:
  void SetUp() override { backend_ = std::make_unique<ClusterBackend>(); }
};

// A first write that timed out (the OSDs hung) and yet arrived once they
// went on made the object this writer's: the next cycle's exclusive
// create of it is refused, the object is found to name this writer, and
// the segment is sent into it again, under its id, with nothing left over.
TEST_F(DrainerClusterTest, AFirstWriteThatTimedOutYetArrivedLeavesTheObjectTheWritersOwn) {
  const std::string image = UniqueImage("landed-late");
  ScriptedSegment source;
  const std::string bytes = Random(kSegmentBytes, 24);
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  DrainOptions now;
  now.gc_delay = std::chrono::seconds(0);
  auto opened = OpenDrainer(image, &source, now, kStoreId, /*timeout_seconds=*/3);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Drainer& drainer = **opened;
  // Hung from the drain's first read of the segment on: its claim checked,
  // its writes sent into sockets nobody reads.
  std::optional<testing::FrozenOsds> frozen;
  source.StallAt(0, [&] { frozen.emplace(); });
  // A deadline before the writes' timeout: the cycle that times out is the
  // last, yet its claim check and reads have time to come first.
  Status cut = drainer.DrainUntil(0, std::chrono::milliseconds(2500));
  ASSERT_TRUE(frozen.has_value() && frozen->frozen());
  EXPECT_FALSE(cut.ok());
  EXPECT_FALSE(drainer.Published(kSegment, 1).has_value());
  frozen.reset();
  const std::string name = ImageManifest::ObjectName(kSegment, 1);
  {
    auto admin = OpenImage(image);
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    ASSERT_TRUE(testing::WaitFor([&] { return (*admin)->Owner(name, ImageManifest::kOwnerXattr).ok(); }, 30))
        << "the timed-out create never arrived";
  }
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  ASSERT_TRUE(drainer.Published(kSegment, 1).has_value());
  EXPECT_EQ(drainer.Published(kSegment, 1)->object, 1u);
  EXPECT_TRUE(ReadBack(&drainer, 1) == bytes);
  EXPECT_FALSE(drainer.Stats().fenced);
  // And nothing to collect: one more cycle leaves the one object.
  source.Commit(1, {{0, kSegmentBytes}}, 0, bytes);
  ASSERT_TRUE(drainer.DrainUntil(0, std::chrono::seconds(60)).ok());
  EXPECT_EQ(SegmentObjects(image), (std::vector<std::string>{name}));
  EXPECT_EQ(drainer.Stats().objects_removed, 0u);
  drainer.Stop();
}

}  // namespace
}  // namespace ckptfs
