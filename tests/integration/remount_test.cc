// Mounting a store right after unmounting it, as scripts, fstab remounts and
// systemd restarts do: fusermount3 -u returns before the daemon has flushed
// and released the store, and the next mount must wait for it, not fail.
// A store that stays mounted is refused at once instead, by a mount and by
// fsck alike.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>

#include "file_util.h"
#include "mounted_store.h"

namespace ckptfs::testing {
namespace {

std::string Bin(const std::string& tool) { return MountedStore::BinDir() + "/" + tool; }

TEST(RemountTest, MountRightAfterUnmountWaitsForTheFlushingDaemon) {
  MountedStore store;
  ASSERT_EQ(store.Format("2G", "32M"), 0);
  const std::string mount_cmd = Bin("ckptfs") + " " + store.store() + " " + store.mountpoint() +
                                " -o log_file=" + store.dir() + "/daemons.log 2>&1";
  CommandOutput first = Capture(mount_cmd);
  ASSERT_EQ(first.rc, 0) << first.out;
  const std::string keep = Random(3 << 20, 7);
  for (int cycle = 0; cycle < 6; ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    // 200 MB written and deleted, so the daemon has buffers to flush and
    // freed segments to log when the unmount comes.
    ASSERT_TRUE(WriteFile(store.Path("big"), Random(200 << 20, cycle)));
    ASSERT_TRUE(WriteFile(store.Path("keep" + std::to_string(cycle)), keep));
    ASSERT_EQ(unlink(store.Path("big").c_str()), 0);
    CommandOutput again = Capture("fusermount3 -u " + store.mountpoint() + " && " + mount_cmd);
    ASSERT_EQ(again.rc, 0) << again.out;
    for (int i = 0; i <= cycle; ++i) {
      EXPECT_EQ(ReadFile(store.Path("keep" + std::to_string(i))), keep) << i;
    }
    struct stat st;
    EXPECT_NE(stat(store.Path("big").c_str(), &st), 0);
  }
  ASSERT_EQ(MountedStore::Run("fusermount3 -u " + store.mountpoint()), 0);
  // fsck waits for the last daemon the same way, then finds the store clean.
  CommandOutput fsck = Capture(Bin("ckptfs-fsck") + " --wait 60 " + store.store() + " 2>&1");
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
}

TEST(RemountTest, AStoreMountedElsewhereIsRefusedAtOnce) {
  MountedStore store;
  ASSERT_EQ(store.Format("256M"), 0);
  ASSERT_TRUE(store.Mount()) << store.log();
  const std::string other = store.dir() + "/other";
  ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
  CommandOutput out = Capture(Bin("ckptfs") + " " + store.store() + " " + other + " 2>&1");
  EXPECT_EQ(out.rc, 1);
  EXPECT_NE(out.out.find("mounted on " + store.mountpoint()), std::string::npos) << out.out;
  EXPECT_EQ(out.out.find("waiting"), std::string::npos) << out.out;
  EXPECT_EQ(store.Unmount(), 0) << store.log();
}

TEST(RemountTest, FsckOfAStoreMountedReadWriteIsRefusedAtOnceNamingTheMount) {
  MountedStore store;
  ASSERT_EQ(store.Format("256M"), 0);
  ASSERT_TRUE(store.Mount()) << store.log();
  const auto start = std::chrono::steady_clock::now();
  CommandOutput fsck = Capture(Bin("ckptfs-fsck") + " --wait 60 " + store.store() + " 2>&1");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30)) << "fsck waited for a mount";
  EXPECT_NE(fsck.rc, 0) << fsck.out;
  EXPECT_NE(fsck.out.find("mounted on " + store.mountpoint()), std::string::npos) << fsck.out;
  EXPECT_EQ(fsck.out.find("waiting"), std::string::npos) << fsck.out;
  EXPECT_EQ(store.Unmount(), 0) << store.log();
  fsck = Capture(Bin("ckptfs-fsck") + " --wait 60 " + store.store() + " 2>&1");
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
}

}  // namespace
}  // namespace ckptfs::testing
