// A store on a filesystem that fills before the store does: a tmpfs of
// 160 MiB made by the test. mkfs allocates the whole store file unless told
// --sparse (and then says it is larger than the space under it); a sparse
// store's mount warns, df counts only what fits, and the writer that finds
// the filesystem full gets ENOSPC with the mount still up, readable, able
// to delete, and able to write again into what the deletion freed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "file_util.h"
#include "mounted_store.h"
#include "temp_dir.h"

namespace ckptfs::testing {
namespace {

std::string Bin(const std::string& tool) { return MountedStore::BinDir() + "/" + tool; }

class BackingFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    dir_ = temp_.path();
    small_ = dir_ + "/small";
    mnt_ = dir_ + "/mnt";
    std::filesystem::create_directories(small_);
    std::filesystem::create_directories(mnt_);
    ASSERT_EQ(mount("tmpfs", small_.c_str(), "tmpfs", 0, "size=160m"), 0) << strerror(errno);
    store_ = small_ + "/store.img";
  }
  void TearDown() override {
    MountedStore::Run("fusermount3 -u " + mnt_ + " 2>/dev/null");
    // The daemon lets go of the store once it has flushed.
    Capture(Bin("ckptfs-fsck") + " --wait 30 --quiet " + store_);
    MountedStore::Run("fusermount3 -u -z " + mnt_ + " 2>/dev/null");
    umount2(small_.c_str(), MNT_DETACH);
  }
  std::string P(const std::string& rel) { return mnt_ + "/" + rel; }

  TempDir temp_{"ckptfs-full"};
  std::string dir_, small_, mnt_, store_;
};

TEST_F(BackingFullTest, MkfsAllocatesTheWholeStoreOrSaysWhyNot) {
  CommandOutput too_big = Capture(Bin("mkfs.ckptfs") + " --size 1G " + store_ + " 2>&1");
  EXPECT_NE(too_big.rc, 0);
  EXPECT_NE(too_big.out.find("--sparse"), std::string::npos) << too_big.out;
  EXPECT_FALSE(std::filesystem::exists(store_)) << "a failed mkfs left its file behind";

  CommandOutput fits = Capture(Bin("mkfs.ckptfs") + " --size 128M --segment-size 4M " + store_ + " 2>&1");
  ASSERT_EQ(fits.rc, 0) << fits.out;
  struct stat st;
  ASSERT_EQ(stat(store_.c_str(), &st), 0);
  EXPECT_GE(st.st_blocks * 512, 128 << 20) << "the store file is sparse";
}

TEST_F(BackingFullTest, ASparseStoreOnAFullFilesystemGivesEnospcAndStaysUsable) {
  CommandOutput made =
      Capture(Bin("mkfs.ckptfs") + " --sparse --size 1G --segment-size 4M " + store_ + " 2>&1");
  ASSERT_EQ(made.rc, 0) << made.out;
  EXPECT_NE(made.out.find("larger than"), std::string::npos) << made.out;
  CommandOutput mounted = Capture(Bin("ckptfs") + " " + store_ + " " + mnt_ + " 2>&1");
  ASSERT_EQ(mounted.rc, 0) << mounted.out;
  EXPECT_NE(mounted.out.find("sparse file"), std::string::npos) << mounted.out;

  struct statvfs sv;
  ASSERT_EQ(statvfs(mnt_.c_str(), &sv), 0);
  EXPECT_LE(sv.f_bavail * sv.f_frsize, 160ull << 20) << "df counts space the tmpfs does not have";

  const std::string keep = Random(8 << 20, 1);
  ASSERT_TRUE(WriteFile(P("keep"), keep, true));
  // Far more than fits under the store.
  EXPECT_EQ(WriteUntilError(P("hog"), Random(1 << 20, 2), 400), ENOSPC);

  // Still mounted, readable and writable for metadata; deleting frees room
  // that is already backed, and it can be written again.
  EXPECT_EQ(ReadFile(P("keep")), keep);
  ASSERT_EQ(mkdir(P("dir").c_str(), 0755), 0);
  ASSERT_EQ(unlink(P("hog").c_str()), 0);
  const std::string again = Random(32 << 20, 3);
  EXPECT_TRUE(WriteFile(P("again"), again, true));
  EXPECT_EQ(ReadFile(P("again")), again);
  EXPECT_EQ(ReadFile(P("keep")), keep);

  ASSERT_EQ(MountedStore::Run("fusermount3 -u " + mnt_), 0);
  CommandOutput fsck = Capture(Bin("ckptfs-fsck") + " --wait 30 " + store_ + " 2>&1");
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
}

}  // namespace
}  // namespace ckptfs::testing
