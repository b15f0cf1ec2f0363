// TierAttachment, the daemon's end of the tier, against the real cluster and
// a real store: the daemon checks the cluster before it forks and connects
// again after, and the cluster can go away in between. The drain must then
// begin once the cluster is back, not never, and say meanwhile why it has
// not. A read-only mount's reader of evicted runs likewise.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ceph_cluster.h"
#include "ckptfs/filesystem.h"
#include "file_util.h"
#include "rados_target.h"
#include "temp_dir.h"
#include "tier_attachment.h"

namespace ckptfs {
namespace {

using testing::CephCluster;
using testing::Random;
using testing::TempDir;
using testing::WaitFor;

// Stops the cluster; starts it again at the latest when it goes, so that a
// failed test leaves it running for the next.
class ClusterOutage {
 public:
  ClusterOutage() : stopped_(CephCluster::Script("stop") == 0) {}
  ~ClusterOutage() { (void)End(); }
  bool stopped() const { return stopped_; }
  int End() {
    if (!stopped_) return 0;
    stopped_ = false;
    return CephCluster::Script("start");
  }

 private:
  bool stopped_;
};

// A store of `size` bytes in 2 MiB segments, formatted in `dir`.
std::string FormatStore(const TempDir& dir, uint64_t size) {
  const std::string store = dir.path() + "/store.img";
  FormatOptions format;
  format.size = size;
  format.segment_size = 2 << 20;
  Status formatted = FileSystem::Format(store, format);
  EXPECT_TRUE(formatted.ok()) << formatted.ToString();
  return store;
}

// A new image of the test cluster's pool, with a 5 s RADOS timeout.
Result<RadosTarget> NewImage(const std::string& name) {
  return ParseRadosSpec("rados:" + std::string(CephCluster::kPool) + "/" + CephCluster::UniqueImage(name),
                        CephCluster::Conf(), "", 5);
}

TEST(TierAttachmentTest, ADrainThatCannotConnectAfterItsCheckRetriesUntilTheClusterIsBack) {
  TempDir dir("ckptfs-attach");
  const std::string store = FormatStore(dir, 256 << 20);
  MountOptions mount;
  mount.track_committed_images = true;
  auto fs = FileSystem::Open(store, mount);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  (*fs)->Start();

  auto target = NewImage("attach");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  DrainOptions options;
  options.busy_bytes_per_second = 0;  // nothing to hold back for
  auto attachment = TierAttachment::Check(*target, options, fs->get());
  ASSERT_TRUE(attachment.ok()) << attachment.status().ToString();
  TierAttachment& tier = **attachment;

  // The store takes a checkpoint while the drain cannot start.
  auto file = (*fs)->Create(1, "shard.pt", 0644, 0, 0);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const std::string bytes = Random(8 << 20, 11);
  {
    ClusterOutage outage;
    ASSERT_TRUE(outage.stopped()) << "see " << CephCluster::Dir() << "/tests.log";
    Status started = tier.Start();
    EXPECT_FALSE(started.ok());
    EXPECT_NE(started.ToString().find("retrying in the background"), std::string::npos) << started.ToString();
    ASSERT_TRUE((*fs)->Write(file->st_ino, 0, bytes.data(), bytes.size()).ok());
    ASSERT_TRUE((*fs)->Sync().ok());
    std::optional<DrainStats> waiting = tier.Stats();
    ASSERT_TRUE(waiting.has_value()) << "a mount with a tier must say where its drain stands";
    EXPECT_GE(waiting->errors, 1u);
    EXPECT_NE(waiting->last_error.find("not connected"), std::string::npos) << waiting->last_error;
    EXPECT_FALSE(waiting->published);
    EXPECT_GT(waiting->committed_lsn, waiting->drained_lsn);
    ASSERT_EQ(outage.End(), 0) << "see " << CephCluster::Dir() << "/tests.log";
  }

  // Back: the retries connect and the drain sends the checkpoint.
  auto drained = [&] {
    std::optional<DrainStats> s = tier.Stats();
    return s && s->published && s->drained_lsn >= s->committed_lsn && s->committed_lsn > 0;
  };
  EXPECT_TRUE(WaitFor(drained, 180, std::chrono::milliseconds(200)));
  std::optional<DrainStats> after = tier.Stats();
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(after->uploaded_bytes, bytes.size());
  EXPECT_TRUE(after->last_error.empty()) << after->last_error;
  ASSERT_TRUE((*fs)->Close().ok());
  EXPECT_TRUE(tier.Finish(std::chrono::seconds(60)).ok());
}

// A read-only mount of a store that evicted runs reads them from the image;
// when its connect after the fork fails, it must read them once the cluster
// is back, as a drain drains then.
TEST(TierAttachmentTest, AReaderThatCannotConnectAfterItsCheckRetriesUntilTheClusterIsBack) {
  TempDir dir("ckptfs-attach");
  const std::string store = FormatStore(dir, 64 << 20);
  auto target = NewImage("reader");
  ASSERT_TRUE(target.ok()) << target.status().ToString();

  // Checkpoints past the device's size, each drained before the next, so
  // that the first ones are evicted to the image.
  std::vector<std::string> checkpoints;
  {
    MountOptions mount;
    mount.track_committed_images = true;
    auto fs = FileSystem::Open(store, mount);
    ASSERT_TRUE(fs.ok()) << fs.status().ToString();
    (*fs)->Start();
    DrainOptions options;
    options.busy_bytes_per_second = 0;
    auto attachment = TierAttachment::Check(*target, options, fs->get());
    ASSERT_TRUE(attachment.ok()) << attachment.status().ToString();
    ASSERT_TRUE((*attachment)->Start().ok());
    for (int step = 0; step < 6; ++step) {
      auto file = (*fs)->Create(1, "step" + std::to_string(step), 0644, 0, 0);
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      checkpoints.push_back(Random(16 << 20, 20 + step));
      ASSERT_TRUE((*fs)->Write(file->st_ino, 0, checkpoints.back().data(), checkpoints.back().size()).ok());
      ASSERT_TRUE((*fs)->Sync().ok());
      auto drained = [&] {
        std::optional<DrainStats> s = (*attachment)->Stats();
        return s && s->published && s->drained_lsn >= s->committed_lsn;
      };
      ASSERT_TRUE(WaitFor(drained, 120, std::chrono::milliseconds(100)));
    }
    EXPECT_GT((*fs)->Stats().evicted_segments, 0u) << "nothing evicted: the test proves nothing";
    ASSERT_TRUE((*fs)->Close().ok());
    EXPECT_TRUE((*attachment)->Finish(std::chrono::seconds(60)).ok());
  }

  MountOptions read_only;
  read_only.read_only = true;
  auto fs = FileSystem::Open(store, read_only);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  (*fs)->Start();
  auto attachment = TierAttachment::CheckReader(*target, fs->get());
  ASSERT_TRUE(attachment.ok()) << attachment.status().ToString();
  TierAttachment& tier = **attachment;
  auto first = (*fs)->Lookup(1, "step0");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::string got(checkpoints[0].size(), '\0');
  auto read_first = [&] {
    auto n = (*fs)->Read(first->st_ino, 0, got.size(), got.data());
    return n.ok() && *n == got.size() && got == checkpoints[0];
  };
  {
    ClusterOutage outage;
    ASSERT_TRUE(outage.stopped()) << "see " << CephCluster::Dir() << "/tests.log";
    Status started = tier.Start();
    EXPECT_FALSE(started.ok());
    EXPECT_NE(started.ToString().find("retrying in the background"), std::string::npos) << started.ToString();
    EXPECT_FALSE(read_first()) << "the first checkpoint was not evicted: the test proves nothing";
    ASSERT_EQ(outage.End(), 0) << "see " << CephCluster::Dir() << "/tests.log";
  }
  // Back: the retries connect and the evicted checkpoint reads.
  EXPECT_TRUE(WaitFor(read_first, 180, std::chrono::milliseconds(200)));
  EXPECT_GT((*fs)->Stats().remote_reads, 0u);
  ASSERT_TRUE((*fs)->Close().ok());
  EXPECT_TRUE(tier.Finish(std::chrono::seconds(10)).ok());
}

}  // namespace
}  // namespace ckptfs
