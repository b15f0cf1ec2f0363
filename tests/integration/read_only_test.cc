// Read-only mounts (-o ro) through the kernel: a store written and
// unmounted reads back by content, every change fails with EROFS, the
// stats say read_only, and the store file's bytes are the same after the
// unmount; a store a crash left with an orphan mounts read-only without
// freeing it. One writer or any number of readers: read-only mounts share a
// store, and a read-write mount is refused beside them (and they beside it)
// with a message that says why.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "file_util.h"
#include "mounted_store.h"

namespace ckptfs::testing {
namespace {

std::string Bin(const std::string& tool) { return MountedStore::BinDir() + "/" + tool; }

// The store file's SHA-256.
std::string Hash(const std::string& path) {
  CommandOutput o = Capture("sha256sum " + path);
  EXPECT_EQ(o.rc, 0) << o.out;
  return o.out.substr(0, o.out.find(' '));
}

std::string MountOptionsOf(const std::string& mountpoint) {
  return Capture("findmnt -no OPTIONS " + mountpoint).out;
}

// A directory of the test's own, unmounted (lazily) whatever happens, for a
// second daemon beside the MountedStore's.
class ExtraMountpoint {
 public:
  ExtraMountpoint(const MountedStore& store, const std::string& name)
      : path_(store.dir() + "/" + name) {
    mkdir(path_.c_str(), 0755);
  }
  ~ExtraMountpoint() { MountedStore::Run("fusermount3 -u -z " + path_ + " 2>/dev/null"); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// errno of a call that must fail, or 0 if it did not.
int Errno(int rc) { return rc == -1 ? errno : 0; }

class ReadOnlyMountTest : public ::testing::Test {
 protected:
  // Writes a small tree and unmounts: the daemon has flushed and exited.
  void SetUp() override {
    ASSERT_EQ(store_.Format("128M"), 0);
    ASSERT_TRUE(store_.Mount()) << store_.log();
    ASSERT_EQ(mkdir(P("dir").c_str(), 0755), 0);
    ASSERT_TRUE(WriteFile(P("dir/big"), big_));
    ASSERT_TRUE(WriteFile(P("small"), small_));
    ASSERT_EQ(setxattr(P("small").c_str(), "user.tag", "kept", 4, 0), 0);
    ASSERT_EQ(symlink("dir/big", P("link").c_str()), 0);
    ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  }
  void TearDown() override {
    if (store_.daemon_pid() > 0) {
      EXPECT_EQ(store_.Unmount(), 0) << store_.log();
    }
  }
  std::string P(const std::string& rel) { return store_.Path(rel); }

  MountedStore store_;
  const std::string big_ = Random(5 << 20, 3);
  const std::string small_ = "small\n";
};

TEST_F(ReadOnlyMountTest, ReadsBackRefusesEveryChangeWithErofsAndLeavesTheStoreAsItWas) {
  const std::string before = Hash(store_.store());
  ASSERT_TRUE(store_.Mount({"ro"})) << store_.log();
  EXPECT_EQ(MountOptionsOf(store_.mountpoint()).rfind("ro,", 0), 0u)
      << MountOptionsOf(store_.mountpoint());
  struct statvfs sv;
  ASSERT_EQ(statvfs(store_.mountpoint().c_str(), &sv), 0);
  EXPECT_TRUE(sv.f_flag & ST_RDONLY);

  EXPECT_TRUE(ReadFile(P("dir/big")) == big_);
  EXPECT_EQ(ReadFile(P("small")), small_);
  EXPECT_TRUE(ReadFile(P("link")) == big_);
  char value[16];
  ASSERT_EQ(getxattr(P("small").c_str(), "user.tag", value, sizeof value), 4);
  EXPECT_EQ(std::string(value, 4), "kept");

  const std::string small = P("small");
  EXPECT_EQ(Errno(open(small.c_str(), O_WRONLY)), EROFS);
  EXPECT_EQ(Errno(open(small.c_str(), O_RDWR)), EROFS);
  EXPECT_EQ(Errno(open(small.c_str(), O_RDONLY | O_TRUNC)), EROFS);
  EXPECT_EQ(Errno(open(P("new").c_str(), O_WRONLY | O_CREAT, 0644)), EROFS);
  EXPECT_EQ(Errno(mkdir(P("newdir").c_str(), 0755)), EROFS);
  EXPECT_EQ(Errno(mknod(P("fifo").c_str(), S_IFIFO | 0644, 0)), EROFS);
  EXPECT_EQ(Errno(symlink("small", P("newlink").c_str())), EROFS);
  EXPECT_EQ(Errno(link(small.c_str(), P("hardlink").c_str())), EROFS);
  EXPECT_EQ(Errno(unlink(small.c_str())), EROFS);
  EXPECT_EQ(Errno(rmdir(P("dir").c_str())), EROFS);
  EXPECT_EQ(Errno(rename(small.c_str(), P("renamed").c_str())), EROFS);
  EXPECT_EQ(Errno(chmod(small.c_str(), 0600)), EROFS);
  EXPECT_EQ(Errno(chown(small.c_str(), 1, 1)), EROFS);
  EXPECT_EQ(Errno(truncate(small.c_str(), 0)), EROFS);
  EXPECT_EQ(Errno(utimes(small.c_str(), nullptr)), EROFS);
  EXPECT_EQ(Errno(setxattr(small.c_str(), "user.new", "v", 1, 0)), EROFS);
  EXPECT_EQ(Errno(removexattr(small.c_str(), "user.tag")), EROFS);
  CommandOutput setfattr = Capture("setfattr -n user.new -v 1 " + small + " 2>&1");
  EXPECT_NE(setfattr.rc, 0);
  EXPECT_NE(setfattr.out.find("Read-only file system"), std::string::npos) << setfattr.out;

  // Opened for reading, a file may still be fsynced and closed.
  int fd = open(P("dir/big").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(fsync(fd), 0) << strerror(errno);
  EXPECT_EQ(close(fd), 0);
  EXPECT_EQ(ReadFile(P("small")), small_);  // nothing changed

  char stats[16384];
  ssize_t n = getxattr(store_.mountpoint().c_str(), "user.ckptfs.stats.json", stats, sizeof stats);
  ASSERT_GT(n, 0);
  const std::string json(stats, static_cast<size_t>(n));
  EXPECT_NE(json.find("\"read_only\":true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"commits\":0,"), std::string::npos) << json;
  CommandOutput stat = Capture(Bin("ckptfs-stat") + " " + store_.mountpoint());
  EXPECT_EQ(stat.rc, 0);
  const size_t at = stat.out.find("\nread_only ");
  ASSERT_NE(at, std::string::npos) << stat.out;
  const std::string line = stat.out.substr(at + 1, stat.out.find('\n', at + 1) - at - 1);
  EXPECT_EQ(line.substr(line.find_last_of(' ') + 1), "true") << line;

  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  EXPECT_NE(store_.log().find("store closed, exiting"), std::string::npos) << store_.log();
  EXPECT_EQ(Hash(store_.store()), before) << "a read-only mount changed the store file";

  // Read-write again, as before.
  ASSERT_TRUE(store_.Mount()) << store_.log();
  EXPECT_EQ(MountOptionsOf(store_.mountpoint()).rfind("rw,", 0), 0u);
  ASSERT_TRUE(WriteFile(P("after"), "rw again"));
  EXPECT_TRUE(ReadFile(P("dir/big")) == big_);
}

// A crash left an inode unlinked while open. A read-write mount would log
// its freeing; a read-only one leaves it (nothing can reach it) and writes
// nothing, and the next read-write mount frees it.
TEST_F(ReadOnlyMountTest, AStoreACrashLeftWithAnOrphanMountsReadOnlyWithoutWriting) {
  ASSERT_TRUE(store_.Mount()) << store_.log();
  ASSERT_TRUE(WriteFile(P("orphan"), Random(3 << 20, 5), true));
  int fd = open(P("orphan").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(unlink(P("orphan").c_str()), 0);
  int dir = open(store_.mountpoint().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  ASSERT_EQ(fsync(dir), 0);  // the unlink is durable, the inode still open
  close(dir);
  store_.Kill();
  close(fd);
  CommandOutput fsck = Capture(Bin("ckptfs-fsck") + " " + store_.store() + " 2>&1");
  ASSERT_NE(fsck.out.find("1 unlinked inode(s) await freeing"), std::string::npos) << fsck.out;

  const std::string before = Hash(store_.store());
  ASSERT_TRUE(store_.Mount({"ro"})) << store_.log();
  EXPECT_TRUE(ReadFile(P("dir/big")) == big_);
  EXPECT_EQ(access(P("orphan").c_str(), F_OK), -1);
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  EXPECT_EQ(Hash(store_.store()), before);
  EXPECT_NE(store_.log().find("left 1 orphaned inode(s)"), std::string::npos) << store_.log();

  ASSERT_TRUE(store_.Mount()) << store_.log();
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  fsck = Capture(Bin("ckptfs-fsck") + " --wait 60 " + store_.store() + " 2>&1");
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
  EXPECT_EQ(fsck.out.find("await freeing"), std::string::npos) << fsck.out;
}

// Any number of read-only mounts share a store; a read-write mount beside
// them is refused at once (it would reuse segments they read), and so is a
// read-only mount beside a read-write one. Each refusal says why.
TEST_F(ReadOnlyMountTest, ReadersShareAStoreAndAWriterIsRefusedBesideThem) {
  const std::string before = Hash(store_.store());
  const std::string mount = Bin("ckptfs") + " " + store_.store() + " ";
  ASSERT_TRUE(store_.Mount({"ro"})) << store_.log();
  {
    ExtraMountpoint second(store_, "second");
    CommandOutput ro = Capture(mount + second.path() + " -o ro 2>&1");
    ASSERT_EQ(ro.rc, 0) << ro.out;
    EXPECT_TRUE(ReadFile(second.path() + "/dir/big") == big_);
    EXPECT_TRUE(ReadFile(P("dir/big")) == big_);

    ExtraMountpoint third(store_, "third");
    CommandOutput rw = Capture(mount + third.path() + " 2>&1");
    EXPECT_EQ(rw.rc, 1) << rw.out;
    EXPECT_NE(rw.out.find("is mounted read-only on "), std::string::npos) << rw.out;
    EXPECT_NE(rw.out.find("a read-write mount needs the store to itself"), std::string::npos)
        << rw.out;
    EXPECT_EQ(rw.out.find("waiting"), std::string::npos) << rw.out;
    EXPECT_EQ(MountOptionsOf(third.path()), "");
    ASSERT_EQ(MountedStore::Run("fusermount3 -u " + second.path()), 0);
  }
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  EXPECT_EQ(Hash(store_.store()), before);

  // The other way round. -o wait=10: the second read-only daemon may still
  // be on its way out.
  ASSERT_TRUE(store_.Mount({"wait=10"})) << store_.log();
  ExtraMountpoint reader(store_, "reader");
  CommandOutput ro = Capture(mount + reader.path() + " -o ro 2>&1");
  EXPECT_EQ(ro.rc, 1) << ro.out;
  EXPECT_NE(ro.out.find("is mounted read-write on " + store_.mountpoint()), std::string::npos)
      << ro.out;
  EXPECT_NE(ro.out.find("cannot share a store with a writer"), std::string::npos) << ro.out;
  EXPECT_EQ(MountOptionsOf(reader.path()), "");
}

}  // namespace
}  // namespace ckptfs::testing
