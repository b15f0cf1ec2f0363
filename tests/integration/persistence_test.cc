// What survives: a clean unmount keeps everything, a kill -9 keeps what was
// fsynced, and a remount finds the very same tree.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>

#include "file_util.h"
#include "mounted_test.h"
#include "store_image.h"

namespace ckptfs::testing {
namespace {

// One line per path: everything a remount must reproduce.
std::string Describe(const std::string& root, const std::string& rel) {
  std::string path = root + (rel.empty() ? "" : "/" + rel);
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return rel + " <lstat failed>";
  std::ostringstream out;
  out << rel << " mode=" << std::oct << st.st_mode << std::dec << " uid=" << st.st_uid
      << " gid=" << st.st_gid << " nlink=" << st.st_nlink << " mtime=" << st.st_mtim.tv_sec << "."
      << st.st_mtim.tv_nsec << " ctime=" << st.st_ctim.tv_sec << "." << st.st_ctim.tv_nsec;
  if (S_ISREG(st.st_mode)) {
    std::string data = ReadFile(path);
    out << " size=" << st.st_size << " hash=" << std::hash<std::string>{}(data);
  } else if (S_ISLNK(st.st_mode)) {
    char buf[4096];
    ssize_t n = readlink(path.c_str(), buf, sizeof buf);
    out << " -> " << std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
  }
  if (!S_ISLNK(st.st_mode)) {
    char names[4096];
    ssize_t n = listxattr(path.c_str(), names, sizeof names);
    for (ssize_t i = 0; i < n; i += static_cast<ssize_t>(strlen(names + i)) + 1) {
      char value[4096];
      ssize_t v = getxattr(path.c_str(), names + i, value, sizeof value);
      out << " xattr:" << (names + i) << "=" << std::string(value, v > 0 ? static_cast<size_t>(v) : 0);
    }
  }
  return out.str();
}

void Walk(const std::string& root, const std::string& rel, std::map<std::string, std::string>* out) {
  (*out)[rel] = Describe(root, rel);
  std::string path = root + (rel.empty() ? "" : "/" + rel);
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  DIR* d = opendir(path.c_str());
  ASSERT_NE(d, nullptr);
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  for (const auto& n : names) Walk(root, rel.empty() ? n : rel + "/" + n, out);
}

std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> tree;
  Walk(root, "", &tree);
  return tree;
}

void FsyncPath(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
}

using PersistenceTest = MountedTest;

TEST_F(PersistenceTest, RemountFindsTheIdenticalTree) {
  ASSERT_EQ(mkdir(P("global_step100").c_str(), 0750), 0);
  ASSERT_EQ(mkdir(P("global_step100/deep").c_str(), 0700), 0);
  for (int i = 0; i < 20; ++i) {
    std::string name = "global_step100/layer_" + std::to_string(i) + "-model_00_model_states.pt";
    ASSERT_TRUE(WriteFile(P(name), Random(static_cast<size_t>(i) * 77777 + 1, i)));
  }
  ASSERT_TRUE(WriteFile(P("global_step100/deep/big.pt"), Random(9 << 20, 99)));
  ASSERT_TRUE(WriteFile(P("empty"), ""));
  ASSERT_EQ(symlink("global_step100", P("latest").c_str()), 0);
  ASSERT_EQ(link(P("empty").c_str(), P("empty.link").c_str()), 0);
  ASSERT_EQ(chmod(P("empty").c_str(), 0604), 0);
  ASSERT_EQ(chown(P("global_step100/deep").c_str(), 42, 43), 0);
  ASSERT_EQ(setxattr(P("global_step100").c_str(), "user.step", "100", 3, 0), 0);
  struct timespec times[2] = {{1600000000, 5}, {1650000000, 6}};
  ASSERT_EQ(utimensat(AT_FDCWD, P("global_step100/deep/big.pt").c_str(), times, 0), 0);
  ASSERT_EQ(truncate(P("global_step100/layer_3-model_00_model_states.pt").c_str(), 1000), 0);
  ASSERT_EQ(rename(P("global_step100/layer_4-model_00_model_states.pt").c_str(),
                   P("global_step100/deep/moved.pt").c_str()), 0);
  ASSERT_EQ(unlink(P("global_step100/layer_5-model_00_model_states.pt").c_str()), 0);

  auto before = Snapshot(store_.mountpoint());
  Remount();
  auto after = Snapshot(store_.mountpoint());
  EXPECT_EQ(before, after);
  EXPECT_EQ(before.size(), 26u);
}

TEST_F(PersistenceTest, OpenWithOTruncReallyTruncates) {
  ASSERT_TRUE(WriteFile(P("ckpt.pt"), Random(100000, 14), true));
  ASSERT_TRUE(WriteFile(P("ckpt.pt"), "hi", true));  // O_TRUNC, as torch.save's "wb"
  EXPECT_EQ(ReadFile(P("ckpt.pt")), "hi");
  Remount();
  EXPECT_EQ(ReadFile(P("ckpt.pt")), "hi");
}

TEST_F(PersistenceTest, CleanUnmountKeepsUnsyncedData) {
  std::string data = Random(20 << 20, 7);
  ASSERT_TRUE(WriteFile(P("nosync"), data, /*fsync_it=*/false));
  Remount();
  EXPECT_EQ(ReadFile(P("nosync")), data);
}

TEST_F(PersistenceTest, KillAfterFsyncKeepsTheFsyncedBytes) {
  std::string synced = Random(12 << 20, 8);
  ASSERT_TRUE(WriteFile(P("synced.tmp"), synced, /*fsync_it=*/true));
  ASSERT_EQ(rename(P("synced.tmp").c_str(), P("synced").c_str()), 0);
  FsyncPath(store_.mountpoint());
  // More work after the last fsync, lost or kept but never half-visible.
  ASSERT_TRUE(WriteFile(P("unsynced"), Random(3 << 20, 9), false));
  CrashAndRemount();
  EXPECT_EQ(ReadFile(P("synced")), synced);
  EXPECT_EQ(access(P("synced.tmp").c_str(), F_OK), -1);
  struct stat st;
  ASSERT_EQ(stat(P("synced").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(synced.size()));
  if (stat(P("unsynced").c_str(), &st) == 0) {
    // Whatever survived of it must read without error.
    EXPECT_EQ(ReadFile(P("unsynced")).size(), static_cast<size_t>(st.st_size));
  }
}

TEST_F(PersistenceTest, RepeatedKillsKeepEveryFsyncedGeneration) {
  std::map<std::string, std::string> expected;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 3; ++i) {
      std::string name = "r" + std::to_string(round) + "_" + std::to_string(i);
      expected[name] = Random((1 << 20) * (i + 1) + round, round * 10 + i);
      ASSERT_TRUE(WriteFile(P(name), expected[name], true));
    }
    FsyncPath(store_.mountpoint());
    CrashAndRemount();
    for (const auto& [name, data] : expected) ASSERT_EQ(ReadFile(P(name)), data) << name;
  }
}

TEST_F(PersistenceTest, FileUnlinkedWhileOpenIsGoneAfterCrash) {
  struct statvfs empty;
  ASSERT_EQ(statvfs(store_.mountpoint().c_str(), &empty), 0);
  ASSERT_TRUE(WriteFile(P("orphan"), Random(40 << 20, 10), true));
  int fd = open(P("orphan").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(unlink(P("orphan").c_str()), 0);
  FsyncPath(store_.mountpoint());
  CrashAndRemount();
  close(fd);  // the descriptor belonged to the dead mount
  EXPECT_EQ(access(P("orphan").c_str(), F_OK), -1);
  struct statvfs after;
  ASSERT_EQ(statvfs(store_.mountpoint().c_str(), &after), 0);
  // The orphan's 40 MiB came back (within a segment's slack).
  EXPECT_GE(after.f_bfree * after.f_frsize + (8u << 20), empty.f_bfree * empty.f_frsize);
}

TEST_F(PersistenceTest, FlippedBitOnTheDeviceReadsAsEioNeverAsWrongBytes) {
  std::string victim = Random(2 << 20, 12), bystander = Random(2 << 20, 13);
  ASSERT_TRUE(WriteFile(P("victim"), victim, true));
  ASSERT_TRUE(WriteFile(P("bystander"), bystander, true));
  ASSERT_EQ(store_.Unmount(), 0);
  uint64_t at = FindInImage(store_.store(), victim, 1 << 20);
  ASSERT_NE(at, 0u);
  FlipBit(store_.store(), at + 100);
  ASSERT_TRUE(store_.Mount()) << store_.log();

  int fd = open(P("victim").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  char buf[4096];
  EXPECT_EQ(pread(fd, buf, sizeof buf, 0), -1);
  EXPECT_EQ(errno, EIO);
  // The damaged run is the first 1 MiB; the second is intact and readable.
  ASSERT_EQ(pread(fd, buf, sizeof buf, 1 << 20), static_cast<ssize_t>(sizeof buf));
  EXPECT_EQ(std::string(buf, sizeof buf), victim.substr(1 << 20, sizeof buf));
  close(fd);
  EXPECT_EQ(ReadFile(P("bystander")), bystander);
  EXPECT_NE(store_.log().find("read of /victim"), std::string::npos) << store_.log();
  EXPECT_NE(store_.log().find("checksum mismatch"), std::string::npos) << store_.log();
}

}  // namespace
}  // namespace ckptfs::testing
