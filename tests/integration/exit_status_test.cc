// The daemon's exit status (mount/exit_code.h) for what a supervisor must
// tell apart. A store whose device dies under the mount: the store file
// sits on an ext4 filesystem of its own (a loop mount made by the test),
// which the test shuts down the way xfstests does (the shutdown ioctl,
// through xfs_io): every write after it fails with EIO. The daemon makes
// the store read-only, fails the fsync that meets it and, unmounted, exits
// 3 with the reason; fsck still finds everything fsynced before it. (Exit
// 4, commits not in RADOS, is in tests/tier; exit 2, bad options, in
// BadInputTest and MetricsTest.)
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <filesystem>
#include <string>

#include "file_util.h"
#include "mounted_store.h"
#include "temp_dir.h"

namespace ckptfs::testing {
namespace {

std::string Bin(const std::string& tool) { return MountedStore::BinDir() + "/" + tool; }

class ExitStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    image_ = temp_.path() + "/ext4.img";
    under_ = temp_.path() + "/under";
    std::filesystem::create_directories(under_);
    ASSERT_EQ(MountedStore::Run("truncate -s 600M " + image_ + " && mkfs.ext4 -q -F " + image_), 0);
    ASSERT_EQ(MountedStore::Run("mount -o loop " + image_ + " " + under_), 0);
    mounted_under_ = true;
    store_ = under_ + "/store.img";
    CommandOutput made = Capture(Bin("mkfs.ckptfs") + " --size 400M " + store_ + " 2>&1");
    ASSERT_EQ(made.rc, 0) << made.out;
  }
  void TearDown() override {
    if (daemon_.daemon_pid() > 0) daemon_.Kill();
    if (mounted_under_) umount2(under_.c_str(), MNT_DETACH);
  }

  TempDir temp_{"ckptfs-exit"};
  std::string image_, under_, store_;
  bool mounted_under_ = false;
  MountedStore daemon_;
};

TEST_F(ExitStatusTest, AStoreWhoseDeviceFailsExitsThreeWithTheReason) {
  ASSERT_TRUE(daemon_.MountFrom(store_)) << daemon_.log();
  const std::string kept = Random(8 << 20, 1);
  ASSERT_TRUE(WriteFile(daemon_.Path("kept"), kept, true));

  // The filesystem under the store goes down: no write reaches it again.
  ASSERT_EQ(MountedStore::Run("xfs_io -x -c 'shutdown -f' " + under_), 0);
  EXPECT_FALSE(WriteFile(daemon_.Path("lost"), Random(8 << 20, 2), true)) << "an fsync that could not be durable";

  EXPECT_EQ(daemon_.Unmount(), 3) << daemon_.log();
  EXPECT_NE(daemon_.log().find("run ckptfs-fsck before mounting it again"), std::string::npos) << daemon_.log();

  // The device back (the filesystem mounted again): what was fsynced is there.
  ASSERT_EQ(umount2(under_.c_str(), 0), 0);
  ASSERT_EQ(MountedStore::Run("mount -o loop " + image_ + " " + under_), 0);
  CommandOutput fsck = Capture(Bin("ckptfs-fsck") + " --quiet " + store_ + " 2>&1");
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
  ASSERT_TRUE(daemon_.MountFrom(store_)) << daemon_.log();
  EXPECT_EQ(ReadFile(daemon_.Path("kept")), kept);
  EXPECT_EQ(daemon_.Unmount(), 0) << daemon_.log();
}

}  // namespace
}  // namespace ckptfs::testing
