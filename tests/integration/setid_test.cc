// Set-id bits and file capabilities after a write (buffered or direct),
// truncate, fallocate or chown, and the group and set-group-id bit of what
// is made in a set-group-id directory, through the mount and on the ext4
// directory beside it, by the same caller: the mount must end where ext4
// ends, as stat shows it at once. The daemon negotiates
// FUSE_HANDLE_KILLPRIV_V2, so clearing them is its job, not the kernel's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <grp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

constexpr uid_t kOwner = 4321;
constexpr gid_t kOwnerGroup = 4321;
constexpr gid_t kOtherGroup = 4999;  // kOwner is not a member
constexpr char kCapability[] = "security.capability";

// A valid VFS_CAP_REVISION_2 blob: CAP_NET_RAW permitted and effective.
std::string CapabilityBlob() {
  const uint32_t words[5] = {0x02000001u, 1u << 13, 0, 0, 0};
  return std::string(reinterpret_cast<const char*>(words), sizeof words);
}

struct Outcome {
  mode_t mode = 0;
  bool has_capability = false;
  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << std::oct << "mode 0" << o.mode << std::dec << (o.has_capability ? " +cap" : "");
}

// Runs `op` in a child that first takes the identity `uid`/`gid` (no
// supplementary groups) unless it is root. A regular file is opened as root
// first, which keeps the path's permissions out of the question (the kernel
// decides on set-id bits from the caller at write time); other types get
// fd -1 and are reached by path.
bool RunAs(const std::string& path, uid_t uid, gid_t gid,
           const std::function<bool(int, const std::string&)>& op) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return false;
  const int fd = S_ISREG(st.st_mode) ? open(path.c_str(), O_RDWR) : -1;
  if (S_ISREG(st.st_mode) && fd < 0) return false;
  const pid_t child = fork();
  if (child == 0) {
    if (uid != 0 && (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0)) _exit(3);
    _exit(op(fd, path) ? 0 : 1);
  }
  if (fd >= 0) close(fd);
  int status = 0;
  if (waitpid(child, &status, 0) != child) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct Case {
  std::string name;
  mode_t mode;         // the file's mode before (S_IFREG if no type is given)
  gid_t file_group;    // the file's group before (owner is kOwner)
  bool capability;     // whether it carries security.capability before
  uid_t caller;        // 0: root
  std::function<bool(int, const std::string&)> op;
};

bool WriteByte(int fd, const std::string&) { return pwrite(fd, "x", 1, 0) == 1 && fsync(fd) == 0; }
bool Truncate(int fd, const std::string&) { return ftruncate(fd, 1) == 0; }
bool ChownToOtherUser(int, const std::string& path) {
  return lchown(path.c_str(), kOwner + 1, static_cast<gid_t>(-1)) == 0;
}
bool ChgrpToOwnGroup(int, const std::string& path) {
  return lchown(path.c_str(), static_cast<uid_t>(-1), kOwnerGroup) == 0;
}
// fallocate's request says nothing of the caller's CAP_FSETID, unlike a
// write's (generic/683-685).
bool Allocate(int fd, const std::string&) { return fallocate(fd, 0, 0, 8192) == 0; }
bool PunchHole(int fd, const std::string&) {
  return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) == 0;
}
bool ZeroRange(int fd, const std::string&) { return fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 4096) == 0; }
// An O_DIRECT write's reply carries no attributes: the mode a stat shows
// next is the kernel's cached one unless the daemon tells it. Opened by the
// caller, as xfs_io -d does in generic/355.
bool DirectWrite(int, const std::string& path) {
  void* block = nullptr;
  if (posix_memalign(&block, 4096, 4096) != 0) return false;
  std::memset(block, 'x', 4096);
  const int fd = open(path.c_str(), O_WRONLY | O_DIRECT);
  const bool ok = fd >= 0 && pwrite(fd, block, 4096, 0) == 4096;
  if (fd >= 0) close(fd);
  std::free(block);
  return ok;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  const mode_t modes[] = {04755, 02755, 02745, 06755, 06745, 04700, 0755};
  for (mode_t mode : modes) {
    for (gid_t group : {kOwnerGroup, kOtherGroup}) {
      cases.push_back({"write by owner", mode, group, false, kOwner, WriteByte});
      cases.push_back({"write by root", mode, group, false, 0, WriteByte});
      cases.push_back({"truncate by owner", mode, group, false, kOwner, Truncate});
      cases.push_back({"truncate by root", mode, group, false, 0, Truncate});
      cases.push_back({"chown by root", mode, group, false, 0, ChownToOtherUser});
      cases.push_back({"direct write by owner", mode, group, false, kOwner, DirectWrite});
      cases.push_back({"direct write by root", mode, group, false, 0, DirectWrite});
      for (uid_t caller : {kOwner, uid_t{0}}) {
        cases.push_back({"fallocate", mode, group, false, caller, Allocate});
        cases.push_back({"punch hole", mode, group, false, caller, PunchHole});
        cases.push_back({"zero range", mode, group, false, caller, ZeroRange});
      }
    }
    cases.push_back({"chgrp by owner", mode, kOwnerGroup, false, kOwner, ChgrpToOwnGroup});
  }
  // A chown clears set-id bits from every type but directories.
  for (mode_t type : {S_IFIFO, S_IFCHR, S_IFBLK, S_IFSOCK, S_IFDIR}) {
    for (mode_t mode : {06555, 06545, 04755}) {
      cases.push_back({"chgrp by owner", type | mode, kOtherGroup, false, kOwner, ChgrpToOwnGroup});
      cases.push_back({"chown by root", type | mode, kOwnerGroup, false, 0, ChownToOtherUser});
    }
  }
  for (uid_t caller : {kOwner, uid_t{0}}) {
    cases.push_back({"write, capability", 0755, kOwnerGroup, true, caller, WriteByte});
    cases.push_back({"truncate, capability", 0755, kOwnerGroup, true, caller, Truncate});
  }
  cases.push_back({"chown by root, capability", 0755, kOwnerGroup, true, 0, ChownToOtherUser});
  return cases;
}

class SetIdTest : public MountedTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(store_.Format(size_), 0);
    ASSERT_TRUE(store_.Mount({"allow_other"})) << store_.log();
    // Callers other than root reach non-regular files by path.
    ASSERT_EQ(chmod(store_.dir().c_str(), 0755), 0);
    plain_ = store_.dir() + "/plain";
    std::filesystem::create_directory(plain_);
  }

  // Prepares `path` as the case says, runs it and reports the outcome.
  Outcome Run(const std::string& path, const Case& c) {
    Outcome out;
    const mode_t type = (c.mode & S_IFMT) ? (c.mode & S_IFMT) : S_IFREG;
    if (type == S_IFREG) {
      std::string data(4096, 'd');
      int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
      EXPECT_GE(fd, 0) << path;
      EXPECT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
      close(fd);
    } else if (type == S_IFDIR) {
      EXPECT_EQ(mkdir(path.c_str(), 0755), 0) << path;
    } else {
      EXPECT_EQ(mknod(path.c_str(), type | 0644, makedev(1, 3)), 0) << path;
    }
    EXPECT_EQ(chown(path.c_str(), kOwner, c.file_group), 0) << path;
    if (c.capability) {
      std::string blob = CapabilityBlob();
      EXPECT_EQ(setxattr(path.c_str(), kCapability, blob.data(), blob.size(), 0), 0)
          << path << ": " << strerror(errno);
    }
    EXPECT_EQ(chmod(path.c_str(), c.mode & 07777), 0) << path;
    EXPECT_TRUE(RunAs(path, c.caller, c.caller ? kOwnerGroup : 0, c.op)) << c.name << " " << path;
    // Asked for the mode alone, as `stat -c %A` asks: a stat(2) wants the
    // block count too, which the kernel refetches after a close, mode and all.
    struct statx stx;
    EXPECT_EQ(statx(AT_FDCWD, path.c_str(), 0, STATX_MODE, &stx), 0);
    out.mode = stx.stx_mode & 07777;
    out.has_capability = getxattr(path.c_str(), kCapability, nullptr, 0) > 0;
    return out;
  }

  std::string plain_;
};

TEST_F(SetIdTest, WriteTruncateAndChownClearSetIdBitsAsExt4Does) {
  int n = 0;
  for (const Case& c : Cases()) {
    const std::string name = "f" + std::to_string(n++);
    const Outcome want = Run(plain_ + "/" + name, c);
    const Outcome got = Run(P(name), c);
    EXPECT_EQ(got, want) << c.name << std::oct << ", mode 0" << c.mode << std::dec
                         << ", file group " << c.file_group << (c.capability ? ", capability" : "");
  }
}

// What is made in a set-group-id directory takes the directory's group, a
// directory made there takes the bit too, and a file whose maker is outside
// the group loses the bit it asked for (generic/314, 633, 696).
TEST_F(SetIdTest, EntriesMadeInASetgidDirectoryTakeItsGroup) {
  const auto make_in = [](int, const std::string& dir) {
    umask(022);
    const int file = open((dir + "/file").c_str(), O_CREAT | O_WRONLY, 02755);
    const int plain = open((dir + "/plain").c_str(), O_CREAT | O_WRONLY, 0644);
    const bool ok = file >= 0 && plain >= 0 && mkdir((dir + "/sub").c_str(), 0755) == 0 &&
                    mkdir((dir + "/sub/deeper").c_str(), 0700) == 0 &&
                    mknod((dir + "/fifo").c_str(), S_IFIFO | 0640, 0) == 0 &&
                    symlink("file", (dir + "/link").c_str()) == 0;
    if (file >= 0) close(file);
    if (plain >= 0) close(plain);
    return ok;
  };
  // "mode gid" of each entry made in a fresh set-group-id directory under
  // `top`, by `caller`.
  const auto made = [&](const std::string& top, uid_t caller) {
    const std::string dir = top + "/sgid" + std::to_string(caller);
    EXPECT_EQ(mkdir(dir.c_str(), 0777), 0) << dir;
    EXPECT_EQ(chown(dir.c_str(), 0, kOtherGroup), 0);
    EXPECT_EQ(chmod(dir.c_str(), 02777), 0);
    EXPECT_TRUE(RunAs(dir, caller, caller ? kOwnerGroup : 0, make_in)) << dir;
    std::string out;
    for (const char* name : {"file", "plain", "sub", "sub/deeper", "fifo", "link"}) {
      struct stat st;
      EXPECT_EQ(lstat((dir + "/" + name).c_str(), &st), 0) << dir << "/" << name;
      char line[96];
      std::snprintf(line, sizeof line, "%s 0%o %u\n", name, st.st_mode, st.st_gid);
      out += line;
    }
    return out;
  };
  for (uid_t caller : {kOwner, uid_t{0}}) {
    const std::string want = made(plain_, caller);
    EXPECT_EQ(made(store_.mountpoint(), caller), want) << "made by uid " << caller;
    // The expectation itself: ext4 gives the directory's group throughout.
    EXPECT_NE(want.find("sub 042755 " + std::to_string(kOtherGroup)), std::string::npos) << want;
  }
}

// What the set-id bits cost on the fast path: a file without them is
// written through the page cache; the kernel must not ask the daemon for
// security.capability on each write(2) (SB_NOSEC, which needs
// FUSE_HANDLE_KILLPRIV_V2).
TEST_F(SetIdTest, PlainWritesDoNotAskForTheCapabilityXattr) {
  auto getxattrs = [&] {
    char buf[16384];
    ssize_t len = getxattr(store_.mountpoint().c_str(), "user.ckptfs.stats.json", buf, sizeof buf);
    std::string json(buf, len > 0 ? static_cast<size_t>(len) : 0);
    size_t at = json.find("\"getxattr\":");
    return at == std::string::npos ? -1L : std::stol(json.substr(at + 11));
  };
  int fd = open(P("plain").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  const long before = getxattrs();
  ASSERT_GE(before, 0);
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(write(fd, "0123456789abcdef", 16), 16);
  close(fd);
  // The stats read itself is one getxattr; the first write may ask once
  // (the kernel then marks the inode as having no security xattrs).
  EXPECT_LE(getxattrs() - before, 3);
}

}  // namespace
}  // namespace ckptfs::testing
