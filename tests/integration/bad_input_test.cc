// Bad input gets a clear error and loses nothing: foreign and damaged
// stores, bad options, a second mount, a full device.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "file_util.h"
#include "mounted_store.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

// Runs the daemon in the foreground and returns its exit code and output.
int RunDaemon(const std::string& args, std::string* output) {
  std::string out_path = "/tmp/ckptfs-daemon-out." + std::to_string(getpid());
  int rc = MountedStore::Run("timeout 20 " + MountedStore::BinDir() + "/ckptfs " + args + " -f > " +
                             out_path + " 2>&1");
  std::ifstream in(out_path);
  output->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  unlink(out_path.c_str());
  return rc;
}

TEST(BadInput, ForeignFileIsRefusedAndLeftUnchanged) {
  MountedStore store;
  std::string garbage = Random(8 << 20, 1);
  ASSERT_TRUE(WriteFile(store.store(), garbage));
  std::string out;
  EXPECT_EQ(RunDaemon(store.store() + " " + store.mountpoint(), &out), 1);
  EXPECT_NE(out.find("not a ckptfs store"), std::string::npos) << out;
  EXPECT_EQ(ReadFile(store.store()), garbage);
}

TEST(BadInput, TruncatedStoreIsRefused) {
  MountedStore store;
  ASSERT_EQ(store.Format("256M"), 0);
  ASSERT_EQ(truncate(store.store().c_str(), 128 << 20), 0);
  std::string out;
  EXPECT_EQ(RunDaemon(store.store() + " " + store.mountpoint(), &out), 1);
  EXPECT_NE(out.find("truncated"), std::string::npos) << out;
}

TEST(BadInput, BothSuperblocksDamagedIsRefused) {
  MountedStore store;
  ASSERT_EQ(store.Format("256M"), 0);
  {
    std::fstream f(store.store(), std::ios::in | std::ios::out | std::ios::binary);
    for (long off : {20L, 4096L + 20L}) {
      f.seekp(off);
      f.put('\x55');
    }
  }
  std::string out;
  EXPECT_EQ(RunDaemon(store.store() + " " + store.mountpoint(), &out), 1);
  EXPECT_NE(out.find("checksum"), std::string::npos) << out;
}

TEST(BadInput, UnknownAndMalformedOptionsAreNamed) {
  MountedStore store;
  ASSERT_EQ(store.Format("256M"), 0);
  std::string out;
  EXPECT_NE(RunDaemon(store.store() + " " + store.mountpoint() + " -o no_such_option", &out), 0);
  EXPECT_NE(out.find("no_such_option"), std::string::npos) << out;
  // Before the store is opened: the option is what is wrong, whatever the
  // store (a replay, a connect to a cluster) would have taken or said.
  EXPECT_EQ(RunDaemon(store.dir() + "/no-such-store " + store.mountpoint() + " -o no_such_option", &out), 2);
  EXPECT_NE(out.find("no_such_option"), std::string::npos) << out;
  EXPECT_EQ(out.find("no-such-store"), std::string::npos) << out;
  EXPECT_EQ(RunDaemon(store.store() + " " + store.mountpoint() + " -o memory=lots", &out), 2);
  EXPECT_NE(out.find("memory=lots"), std::string::npos) << out;
  EXPECT_EQ(RunDaemon(store.store() + " " + store.mountpoint() + " -o log_level=loud", &out), 2);
  EXPECT_NE(out.find("log_level=loud"), std::string::npos) << out;
  EXPECT_EQ(RunDaemon(store.store() + " " + store.mountpoint() + " -o compress=lz4", &out), 2);
  EXPECT_NE(out.find("compress=lz4"), std::string::npos) << out;
  EXPECT_EQ(RunDaemon(store.store() + " " + store.mountpoint() + " -o compress=zstd:42", &out), 2);
  EXPECT_NE(out.find("compress=zstd:42"), std::string::npos) << out;
  EXPECT_EQ(RunDaemon(store.store() + " " + store.mountpoint() + " -o compress_backlog=drop", &out), 2);
  EXPECT_NE(out.find("compress_backlog=drop"), std::string::npos) << out;
  EXPECT_EQ(RunDaemon(store.store(), &out), 2);  // no mountpoint
  EXPECT_NE(out.find("usage"), std::string::npos) << out;
}

TEST(BadInput, NonEmptyMountpointIsRefused) {
  MountedStore store;
  ASSERT_EQ(store.Format("256M"), 0);
  ASSERT_TRUE(WriteFile(store.mountpoint() + "/hidden", "x"));
  std::string out;
  EXPECT_EQ(RunDaemon(store.store() + " " + store.mountpoint(), &out), 1);
  EXPECT_NE(out.find("not empty"), std::string::npos) << out;
  unlink((store.mountpoint() + "/hidden").c_str());
}

class MountedSmallStore : public MountedTest {
 protected:
  MountedSmallStore() : MountedTest("96M") {}
};

TEST_F(MountedSmallStore, SecondMountOfTheSameStoreIsRefused) {
  std::string other = store_.dir() + "/other";
  mkdir(other.c_str(), 0755);
  std::string out;
  EXPECT_EQ(RunDaemon(store_.store() + " " + other, &out), 1);
  EXPECT_NE(out.find("in use"), std::string::npos) << out;
}

TEST_F(MountedSmallStore, FullDeviceGivesEnospcKeepsOtherFilesAndRecovers) {
  std::string keep = Random(8 << 20, 2);
  ASSERT_TRUE(WriteFile(P("keep"), keep, true));
  // Far more than fits.
  EXPECT_EQ(WriteUntilError(P("hog"), Random(1 << 20, 3), 200), ENOSPC);
  EXPECT_EQ(ReadFile(P("keep")), keep);

  ASSERT_EQ(unlink(P("hog").c_str()), 0);
  std::string again = Random(16 << 20, 4);
  ASSERT_TRUE(WriteFile(P("again"), again, true));
  Remount();
  EXPECT_EQ(ReadFile(P("keep")), keep);
  EXPECT_EQ(ReadFile(P("again")), again);
}

}  // namespace
}  // namespace ckptfs::testing
