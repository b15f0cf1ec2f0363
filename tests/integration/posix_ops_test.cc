// Every POSIX operation the daemon implements, exercised through the kernel
// on a real mount.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.h"
#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

std::set<std::string> List(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (!d) return names;
  while (dirent* e = readdir(d)) names.insert(e->d_name);
  closedir(d);
  return names;
}

using PosixOpsTest = MountedTest;

TEST_F(PosixOpsTest, WriteReadAndStat) {
  std::string data = Random(5 * 1000 * 1000 + 17, 1);
  ASSERT_TRUE(WriteFile(P("f"), data));
  EXPECT_EQ(ReadFile(P("f")), data);
  struct stat st;
  ASSERT_EQ(stat(P("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(data.size()));
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_GE(st.st_blocks * 512, static_cast<blkcnt_t>(data.size()));
}

TEST_F(PosixOpsTest, PwriteLeavesHolesThatReadAsZeros) {
  int fd = open(P("sparse").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, "end", 3, 10 << 20), 3);
  ASSERT_EQ(pwrite(fd, "mid", 3, 4096 + 5), 3);
  char buf[8192];
  ASSERT_EQ(pread(fd, buf, sizeof buf, 0), static_cast<ssize_t>(sizeof buf));
  std::string want(8192, '\0');
  want.replace(4101, 3, "mid");
  EXPECT_EQ(std::string(buf, sizeof buf), want);
  ASSERT_EQ(pread(fd, buf, 3, 10 << 20), 3);
  EXPECT_EQ(std::string(buf, 3), "end");
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, (10 << 20) + 3);
  EXPECT_LT(st.st_blocks * 512, 1 << 20);  // holes take no space
  close(fd);
}

TEST_F(PosixOpsTest, TruncateDownAndUp) {
  ASSERT_TRUE(WriteFile(P("t"), std::string(100000, 'q')));
  ASSERT_EQ(truncate(P("t").c_str(), 10), 0);
  EXPECT_EQ(ReadFile(P("t")), std::string(10, 'q'));
  int fd = open(P("t").c_str(), O_RDWR);
  ASSERT_EQ(ftruncate(fd, 5000), 0);
  close(fd);
  std::string want(5000, '\0');
  want.replace(0, 10, std::string(10, 'q'));
  EXPECT_EQ(ReadFile(P("t")), want);
}

TEST_F(PosixOpsTest, DirectoriesListAndRemove) {
  ASSERT_EQ(mkdir(P("d").c_str(), 0750), 0);
  std::set<std::string> want = {".", ".."};
  for (int i = 0; i < 1500; ++i) {  // several readdir buffers' worth
    std::string name = "entry-with-a-longish-name-" + std::to_string(i);
    ASSERT_TRUE(WriteFile(P("d/" + name), "x"));
    want.insert(name);
  }
  EXPECT_EQ(List(P("d")), want);
  EXPECT_EQ(rmdir(P("d").c_str()), -1);
  EXPECT_EQ(errno, ENOTEMPTY);
  for (const auto& name : want) {
    if (name != "." && name != "..") {
      ASSERT_EQ(unlink(P("d/" + name).c_str()), 0);
    }
  }
  EXPECT_EQ(rmdir(P("d").c_str()), 0);
  struct stat st;
  EXPECT_EQ(stat(P("d").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST_F(PosixOpsTest, RenameReplacesAtomicallyAndHonoursFlags) {
  ASSERT_TRUE(WriteFile(P("new.tmp"), "new"));
  ASSERT_TRUE(WriteFile(P("ckpt"), "old"));
  ASSERT_EQ(rename(P("new.tmp").c_str(), P("ckpt").c_str()), 0);
  EXPECT_EQ(ReadFile(P("ckpt")), "new");
  EXPECT_EQ(access(P("new.tmp").c_str(), F_OK), -1);

  ASSERT_TRUE(WriteFile(P("a"), "A"));
  EXPECT_EQ(syscall(SYS_renameat2, AT_FDCWD, P("a").c_str(), AT_FDCWD, P("ckpt").c_str(),
                    RENAME_NOREPLACE), -1);
  EXPECT_EQ(errno, EEXIST);
  ASSERT_EQ(syscall(SYS_renameat2, AT_FDCWD, P("a").c_str(), AT_FDCWD, P("ckpt").c_str(),
                    RENAME_EXCHANGE), 0);
  EXPECT_EQ(ReadFile(P("a")), "new");
  EXPECT_EQ(ReadFile(P("ckpt")), "A");

  ASSERT_EQ(mkdir(P("dir1").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("dir1/sub").c_str(), 0755), 0);
  ASSERT_EQ(rename(P("dir1").c_str(), P("dir2").c_str()), 0);
  EXPECT_EQ(List(P("dir2")), (std::set<std::string>{".", "..", "sub"}));
  EXPECT_EQ(rename(P("dir2").c_str(), P("dir2/sub/inside").c_str()), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(PosixOpsTest, UnlinkedOpenFileStaysReadableUntilClosed) {
  std::string data = Random(3 << 20, 2);
  ASSERT_TRUE(WriteFile(P("victim"), data, true));
  int fd = open(P("victim").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(unlink(P("victim").c_str()), 0);
  EXPECT_EQ(access(P("victim").c_str(), F_OK), -1);
  std::string got(data.size(), '\0');
  ASSERT_EQ(pread(fd, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
  EXPECT_EQ(got, data);
  close(fd);
}

TEST_F(PosixOpsTest, SymlinksAndHardLinks) {
  ASSERT_TRUE(WriteFile(P("target"), "content"));
  ASSERT_EQ(symlink("target", P("sym").c_str()), 0);
  char buf[64];
  ssize_t n = readlink(P("sym").c_str(), buf, sizeof buf);
  ASSERT_EQ(n, 6);
  EXPECT_EQ(std::string(buf, 6), "target");
  EXPECT_EQ(ReadFile(P("sym")), "content");
  struct stat st;
  ASSERT_EQ(lstat(P("sym").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));

  ASSERT_EQ(link(P("target").c_str(), P("hard").c_str()), 0);
  ASSERT_EQ(stat(P("target").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 2u);
  ASSERT_EQ(unlink(P("target").c_str()), 0);
  EXPECT_EQ(ReadFile(P("hard")), "content");
  ASSERT_EQ(stat(P("hard").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
}

TEST_F(PosixOpsTest, ModesOwnersAndTimes) {
  ASSERT_TRUE(WriteFile(P("m"), "x"));
  ASSERT_EQ(chmod(P("m").c_str(), 0600), 0);
  ASSERT_EQ(chown(P("m").c_str(), 1234, 5678), 0);
  struct timespec times[2] = {{1000000000, 111}, {1200000000, 222}};
  ASSERT_EQ(utimensat(AT_FDCWD, P("m").c_str(), times, 0), 0);
  struct stat st;
  ASSERT_EQ(stat(P("m").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_gid, 5678u);
  EXPECT_EQ(st.st_atim.tv_sec, 1000000000);
  EXPECT_EQ(st.st_mtim.tv_sec, 1200000000);
  EXPECT_EQ(st.st_mtim.tv_nsec, 222);
}

// The kernel forgets inodes it dropped from its cache, many at a time
// (BATCH_FORGET); the daemon serves and counts those requests too.
TEST_F(PosixOpsTest, ForgottenInodesAreCountedWhenTheKernelDropsThem) {
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(WriteFile(P("f" + std::to_string(i)), "x"));
  struct stat st;
  for (int i = 0; i < 300; ++i) ASSERT_EQ(stat(P("f" + std::to_string(i)).c_str(), &st), 0);
  sync();
  ASSERT_EQ(MountedStore::Run("echo 2 > /proc/sys/vm/drop_caches"), 0);
  std::string json;
  auto count = [&](const std::string& key) -> long {
    size_t at = json.find("\"" + key + "\":");
    return at == std::string::npos ? 0 : std::stol(json.substr(at + key.size() + 3));
  };
  // Whether the kernel batches them depends on how fast the daemon reads,
  // so the two counts are checked together. Another of the daemon's
  // threads may still be serving the forgets when this one answers the
  // stats: they are read until they show, for a while.
  WaitFor(
      [&] {
        char buf[16384];
        ssize_t n = getxattr(store_.mountpoint().c_str(), "user.ckptfs.stats.json", buf, sizeof buf);
        json.assign(buf, static_cast<size_t>(std::max<ssize_t>(n, 0)));
        return count("forget") + count("batch_forget") > 0;
      },
      30, std::chrono::milliseconds(100));
  ASSERT_FALSE(json.empty()) << "the stats could not be read";
  EXPECT_GT(count("forget") + count("batch_forget"), 0) << json;
  // Every file is still there after the kernel let go of it.
  for (int i = 0; i < 300; ++i) ASSERT_EQ(stat(P("f" + std::to_string(i)).c_str(), &st), 0);
}

TEST_F(PosixOpsTest, StatsAreServedAsRootXattrs) {
  ASSERT_TRUE(WriteFile(P("counted"), std::string(1 << 20, 'c'), true));
  char buf[8192];
  ssize_t n = getxattr(store_.mountpoint().c_str(), "user.ckptfs.stats.json", buf, sizeof buf);
  ASSERT_GT(n, 0);
  std::string json(buf, static_cast<size_t>(n));
  EXPECT_NE(json.find("\"bytes_written\":1048576"), std::string::npos) << json;
  EXPECT_NE(json.find("\"fsync\":"), std::string::npos) << json;
  n = getxattr(store_.mountpoint().c_str(), "user.ckptfs.stats", buf, sizeof buf);
  ASSERT_GT(n, 0);
  EXPECT_NE(std::string(buf, static_cast<size_t>(n)).find("write_amplification"), std::string::npos);
  // Not stored, not listed, not settable: cp -a and rsync -X never copy them.
  EXPECT_EQ(listxattr(store_.mountpoint().c_str(), buf, sizeof buf), 0);
  EXPECT_EQ(setxattr(store_.mountpoint().c_str(), "user.ckptfs.stats", "x", 1, 0), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(MountedStore::Run(MountedStore::BinDir() + "/ckptfs-stat " + store_.mountpoint() +
                              " > /dev/null"), 0);
}

TEST_F(PosixOpsTest, MountReadAheadIsRaised) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line, device;
  while (std::getline(mountinfo, line)) {
    std::istringstream f(line);
    std::string id, parent, dev, root, point;
    f >> id >> parent >> dev >> root >> point;
    if (point == store_.mountpoint()) device = dev;
  }
  ASSERT_FALSE(device.empty());
  std::ifstream knob("/sys/class/bdi/" + device + "/read_ahead_kb");
  unsigned kb = 0;
  knob >> kb;
  EXPECT_EQ(kb, 1024u);
}

TEST_F(PosixOpsTest, ExtendedAttributes) {
  ASSERT_TRUE(WriteFile(P("x"), "x"));
  ASSERT_EQ(setxattr(P("x").c_str(), "user.ckpt.step", "1200", 4, 0), 0);
  ASSERT_EQ(setxattr(P("x").c_str(), "user.other", "v", 1, 0), 0);
  EXPECT_EQ(setxattr(P("x").c_str(), "user.other", "w", 1, XATTR_CREATE), -1);
  EXPECT_EQ(errno, EEXIST);
  char buf[256];
  ASSERT_EQ(getxattr(P("x").c_str(), "user.ckpt.step", buf, sizeof buf), 4);
  EXPECT_EQ(std::string(buf, 4), "1200");
  EXPECT_EQ(getxattr(P("x").c_str(), "user.ckpt.step", buf, 2), -1);
  EXPECT_EQ(errno, ERANGE);
  ssize_t n = listxattr(P("x").c_str(), buf, sizeof buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), std::string("user.ckpt.step\0user.other\0", 26));
  ASSERT_EQ(removexattr(P("x").c_str(), "user.other"), 0);
  EXPECT_EQ(getxattr(P("x").c_str(), "user.other", buf, sizeof buf), -1);
  EXPECT_EQ(errno, ENODATA);
}

TEST_F(PosixOpsTest, StatfsTellsTheTruth) {
  struct statvfs before;
  ASSERT_EQ(statvfs(store_.mountpoint().c_str(), &before), 0);
  const uint64_t total = before.f_blocks * before.f_frsize;
  EXPECT_GT(total, 400ull << 20);
  EXPECT_LE(total, 512ull << 20);
  ASSERT_TRUE(WriteFile(P("fill"), Random(64 << 20, 3), true));
  struct statvfs after;
  ASSERT_EQ(statvfs(store_.mountpoint().c_str(), &after), 0);
  const uint64_t used = (before.f_bfree - after.f_bfree) * after.f_frsize;
  EXPECT_GE(used, 64ull << 20);
  EXPECT_LT(used, 80ull << 20);
  ASSERT_EQ(unlink(P("fill").c_str()), 0);
  int fd = open(store_.mountpoint().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_EQ(fsync(fd), 0);  // deletions free space once committed
  close(fd);
  // Free once the commit has freed the file's segments. Background work
  // may hold some segments for a moment (once in CI, 12 of them right after
  // the commit, over FUSE over io_uring), so the check waits a bounded time
  // for the space to show.
  struct statvfs freed {};
  EXPECT_TRUE(WaitFor(
      [&] {
        return statvfs(store_.mountpoint().c_str(), &freed) == 0 &&
               freed.f_bfree > after.f_bfree + (48u << 20) / after.f_frsize;
      },
      10))
      << "free blocks " << freed.f_bfree << " after the delete, " << after.f_bfree << " before it";
}

TEST_F(PosixOpsTest, FallocateExtendsTheFile) {
  int fd = open(P("pre").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fallocate(fd, 0, 0, 1 << 20), 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);
  // Punching a hole leaves the size and reads back zeros.
  ASSERT_EQ(pwrite(fd, "abcd", 4, 8192), 4);
  ASSERT_EQ(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 8192, 2), 0);
  char got[4];
  ASSERT_EQ(pread(fd, got, 4, 8192), 4);
  EXPECT_EQ(std::string(got, 4), std::string("\0\0cd", 4));
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);
  // Moving data within a file is not something a log-structured store does.
  EXPECT_EQ(fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, 4096), -1);
  EXPECT_EQ(errno, EOPNOTSUPP);
  close(fd);
}

// fallocate reserves whole blocks (generic/568): st_blocks and statfs count
// them at once, and writing into them takes no more space.
TEST_F(PosixOpsTest, FallocateReservesTheBlocksItCovers) {
  int fd = open(P("reserved").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fallocate(fd, 0, 4095, 2), 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 4097);
  EXPECT_EQ(st.st_blocks, 16);
  ASSERT_EQ(pwrite(fd, "ab", 2, 4095), 2);
  ASSERT_EQ(fsync(fd), 0);
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_blocks, 16);
  char got[3] = {};
  ASSERT_EQ(pread(fd, got, 3, 4094), 3);
  EXPECT_EQ(std::string(got, 3), std::string("\0ab", 3));
  close(fd);

  struct statvfs before, after;
  ASSERT_EQ(statvfs(store_.mountpoint().c_str(), &before), 0);
  fd = open(P("held").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 32 << 20), 0);
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(st.st_blocks, (32 << 20) / 512);
  ASSERT_EQ(statvfs(store_.mountpoint().c_str(), &after), 0);
  EXPECT_LE((after.f_bfree + (32u << 20) / after.f_frsize), before.f_bfree);
  // More than the store holds is refused, and reserves nothing.
  EXPECT_EQ(fallocate(fd, FALLOC_FL_KEEP_SIZE, 32 << 20, 1ll << 40), -1);
  EXPECT_EQ(errno, ENOSPC);
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_blocks, (32 << 20) / 512);
  close(fd);
}

// A copy within the mount shares the stored runs: cp (which uses
// copy_file_range) writes no data, and the copy is independent of its
// source afterwards.
TEST_F(PosixOpsTest, CopiesShareRunsAndStayIndependent) {
  const auto stats = [&] {
    char buf[16384];
    ssize_t n = getxattr(store_.mountpoint().c_str(), "user.ckptfs.stats.json", buf, sizeof buf);
    return std::string(buf, static_cast<size_t>(std::max<ssize_t>(n, 0)));
  };
  const std::string data = Random((16 << 20) + 333, 17);
  ASSERT_TRUE(WriteFile(P("ckpt.pt"), data, true));
  const std::string before = stats();
  ASSERT_EQ(MountedStore::Run("cp " + P("ckpt.pt") + " " + P("milestone.pt") + " && sync"), 0);
  const std::string after = stats();
  EXPECT_EQ(ReadFile(P("milestone.pt")), data);
  EXPECT_EQ(JsonField(after, "bytes_copied") - JsonField(before, "bytes_copied"), data.size())
      << after;
  EXPECT_LT(JsonField(after, "data_device_bytes") - JsonField(before, "data_device_bytes"),
            1u << 20)
      << after;
  EXPECT_GE(JsonField(after, "shared_bytes"), data.size() - 4096) << after;

  // An unaligned copy_file_range into the middle of a cached file.
  const std::string other(300000, 'o');
  ASSERT_TRUE(WriteFile(P("other"), other, false));
  std::string want = other;
  int in = open(P("ckpt.pt").c_str(), O_RDONLY);
  int out = open(P("other").c_str(), O_RDWR);
  ASSERT_GE(in, 0);
  ASSERT_GE(out, 0);
  ASSERT_EQ(ReadFile(P("other")), other);  // its pages are cached now
  loff_t in_off = 1001, out_off = 4097;
  ASSERT_EQ(copy_file_range(in, &in_off, out, &out_off, 200000, 0), 200000) << strerror(errno);
  want.replace(4097, 200000, data, 1001, 200000);
  EXPECT_EQ(ReadFile(P("other")), want);
  close(in);
  close(out);

  // The source overwritten and deleted: the copies keep what was copied.
  int fd = open(P("ckpt.pt").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, "changed", 7, 2000), 7);
  close(fd);
  ASSERT_EQ(unlink(P("ckpt.pt").c_str()), 0);
  ASSERT_EQ(MountedStore::Run("sync"), 0);
  EXPECT_EQ(ReadFile(P("milestone.pt")), data);
  EXPECT_EQ(ReadFile(P("other")), want);
}

TEST_F(PosixOpsTest, MmapReadSeesTheWrittenBytes) {
  std::string data = Random((7 << 20) + 123, 4);
  ASSERT_TRUE(WriteFile(P("array.npy"), data, true));
  int fd = open(P("array.npy").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* map = mmap(nullptr, data.size(), PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  EXPECT_EQ(memcmp(map, data.data(), data.size()), 0);
  munmap(map, data.size());
  close(fd);
}

TEST_F(PosixOpsTest, MknodMakesRegularFilesAndDeviceNodes) {
  ASSERT_EQ(mknod(P("node").c_str(), S_IFREG | 0640, 0), 0);
  struct stat st;
  ASSERT_EQ(stat(P("node").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  ASSERT_EQ(mknod(P("dev").c_str(), S_IFBLK | 0600, makedev(8, 0)), 0);
  ASSERT_EQ(stat(P("dev").c_str(), &st), 0);
  EXPECT_TRUE(S_ISBLK(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(8, 0));
}

TEST_F(PosixOpsTest, ErrorsComeBackAsErrno) {
  EXPECT_EQ(open(P("missing").c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, ENOENT);
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  EXPECT_EQ(mkdir(P("d").c_str(), 0755), -1);
  EXPECT_EQ(errno, EEXIST);
  ASSERT_TRUE(WriteFile(P("f"), "x"));
  EXPECT_EQ(rmdir(P("f").c_str()), -1);
  EXPECT_EQ(errno, ENOTDIR);
  EXPECT_EQ(unlink(P("d").c_str()), -1);
  EXPECT_EQ(errno, EISDIR);
  EXPECT_EQ(open((P("f") + "/below").c_str(), O_CREAT | O_WRONLY, 0644), -1);
  EXPECT_EQ(errno, ENOTDIR);
  std::string long_name(300, 'n');
  EXPECT_EQ(open(P(long_name).c_str(), O_CREAT | O_WRONLY, 0644), -1);
  EXPECT_EQ(errno, ENAMETOOLONG);
}

// O_TMPFILE, RENAME_WHITEOUT and POSIX ACLs are refused with the errno a
// filesystem lacking them gives (ext4 mounted noacl gives EOPNOTSUPP for
// ACLs), so the tools' fallbacks take over: Python's TemporaryFile makes
// and unlinks a named file, setfacl leaves the mode bits alone.
TEST_F(PosixOpsTest, TmpfileWhiteoutAndAclsAreRefusedAsAFilesystemWithoutThemRefusesThem) {
  EXPECT_EQ(open(store_.mountpoint().c_str(), O_TMPFILE | O_RDWR, 0600), -1);
  EXPECT_EQ(errno, EOPNOTSUPP);
  ASSERT_TRUE(WriteFile(P("a"), "kept"));
  EXPECT_EQ(syscall(SYS_renameat2, AT_FDCWD, P("a").c_str(), AT_FDCWD, P("b").c_str(), RENAME_WHITEOUT), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(ReadFile(P("a")), "kept");
  // A minimal access ACL: user::rw-, group::r--, other::r--.
  const uint32_t acl[] = {2, 0x00060001, 0xffffffff, 0x00040004, 0xffffffff, 0x00040020, 0xffffffff};
  EXPECT_EQ(setxattr(P("a").c_str(), "system.posix_acl_access", acl, sizeof acl, 0), -1);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(getxattr(P("a").c_str(), "system.posix_acl_access", nullptr, 0), -1);
  EXPECT_EQ(errno, EOPNOTSUPP);
  const CommandOutput py = Capture("/usr/bin/python3 -c \"import tempfile; f = tempfile.TemporaryFile(dir='" +
                                   store_.mountpoint() + "'); f.write(b'x'); f.seek(0); print(f.read())\" 2>&1");
  EXPECT_EQ(py.rc, 0) << py.out;
  EXPECT_EQ(py.out, "b'x'\n");
}

TEST_F(PosixOpsTest, ConcurrentWritersEachReadBackTheirOwnBytes) {
  constexpr int kWriters = 8;
  std::vector<std::string> data(kWriters);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    data[i] = Random((6 << 20) + i * 4099, 100 + i);
    threads.emplace_back([&, i] { EXPECT_TRUE(WriteFile(P("shard" + std::to_string(i)), data[i], true)); });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kWriters; ++i) EXPECT_EQ(ReadFile(P("shard" + std::to_string(i))), data[i]);
}


TEST_F(PosixOpsTest, AFileWrittenInThousandsOfPiecesReadsBackWhole) {
  // 512-byte direct writes: each is a run of its own, so one 1 MiB direct
  // read spans 2048 of them, more than one reply to the kernel can carry
  // as separate pieces.
  const std::string data = Random(2 << 20, 7);
  int fd = open(P("tiny").c_str(), O_WRONLY | O_CREAT | O_DIRECT, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::unique_ptr<void, decltype(&free)> block(aligned_alloc(4096, 4096), &free);
  for (size_t at = 0; at < data.size(); at += 512) {
    std::memcpy(block.get(), data.data() + at, 512);
    ASSERT_EQ(pwrite(fd, block.get(), 512, static_cast<off_t>(at)), 512) << std::strerror(errno);
  }
  ASSERT_EQ(close(fd), 0);
  TempDir scratch;
  const std::string want = scratch.path() + "/want";
  ASSERT_TRUE(WriteFile(want, data));
  // Read by another process under a bound: a reply that never comes fails
  // the test instead of hanging it.
  CommandOutput read = Capture("timeout -s KILL 60 dd if=" + P("tiny") +
                               " iflag=direct bs=1M status=none | cmp - " + want + " 2>&1");
  ASSERT_EQ(read.rc, 0) << read.out;
  EXPECT_EQ(ReadFile(P("tiny")), data);
}

}  // namespace
}  // namespace ckptfs::testing
