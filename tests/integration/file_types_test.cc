// Every file type (regular, directory, symlink, FIFO, socket, character
// and block device) by every namespace operation that applies to it, on
// the mount and on the ext4 directory beside it: the same calls must give
// the same results and errno, line for line. Device nodes are stored like
// any inode (mode, rdev, owner, times, links, xattrs) and survive a remount
// and fsck.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

enum class Type { kRegular, kDirectory, kSymlink, kFifo, kSocket, kChar, kBlock };
constexpr Type kTypes[] = {Type::kRegular, Type::kDirectory, Type::kSymlink, Type::kFifo,
                           Type::kSocket,  Type::kChar,      Type::kBlock};

const char* Name(Type t) {
  switch (t) {
    case Type::kRegular: return "reg";
    case Type::kDirectory: return "dir";
    case Type::kSymlink: return "symlink";
    case Type::kFifo: return "fifo";
    case Type::kSocket: return "sock";
    case Type::kChar: return "chr";
    case Type::kBlock: return "blk";
  }
  return "?";
}

// Makes a node of type `t` at `path`; returns 0 or errno.
int Make(const std::string& path, Type t) {
  int rc = 0;
  switch (t) {
    case Type::kRegular: {
      const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0640);
      if (fd < 0) return errno;
      rc = write(fd, "data", 4) == 4 ? 0 : -1;
      close(fd);
      break;
    }
    case Type::kDirectory: rc = mkdir(path.c_str(), 0750); break;
    case Type::kSymlink: rc = symlink("some/target", path.c_str()); break;
    case Type::kFifo: rc = mknod(path.c_str(), S_IFIFO | 0640, 0); break;
    case Type::kSocket: rc = mknod(path.c_str(), S_IFSOCK | 0640, 0); break;
    case Type::kChar: rc = mknod(path.c_str(), S_IFCHR | 0640, makedev(1, 3)); break;
    case Type::kBlock: rc = mknod(path.c_str(), S_IFBLK | 0640, makedev(7, 200)); break;
  }
  return rc == 0 ? 0 : errno;
}

// What ext4 and ckptfs must agree on about a node. Directory sizes and
// block counts are each filesystem's own and left out.
std::string Describe(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return std::string("absent (") + strerrorname_np(errno) + ")";
  char buf[256];
  std::snprintf(buf, sizeof buf, "type %o mode %04o rdev %u:%u uid %u gid %u nlink %lu",
                st.st_mode & S_IFMT, st.st_mode & 07777, major(st.st_rdev), minor(st.st_rdev),
                st.st_uid, st.st_gid, static_cast<unsigned long>(S_ISDIR(st.st_mode) ? 0 : st.st_nlink));
  std::string out = buf;
  if (!S_ISDIR(st.st_mode)) out += " size " + std::to_string(st.st_size);
  return out;
}

std::string Errno(int rc) { return rc == 0 ? "ok" : strerrorname_np(errno); }

// open(2) as a step: 0 or -1 with errno, the descriptor closed.
int Open(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags, 0600);
  if (fd < 0) return -1;
  close(fd);
  return 0;
}

// Runs every case under `root` and writes what happened, a line a step.
std::string Transcript(const std::string& root) {
  std::ostringstream log;
  int n = 0;
  auto fresh = [&] {
    std::string dir = root + "/c" + std::to_string(n++);
    mkdir(dir.c_str(), 0755);
    return dir;
  };
  auto step = [&](const std::string& what, int rc) { log << what << ": " << Errno(rc) << "\n"; };

  for (Type t : kTypes) {
    const std::string T = Name(t);
    const std::string d = fresh();
    const std::string p = d + "/node";
    log << T << " make: " << (Make(p, t) == 0 ? "ok" : "failed") << "; " << Describe(p) << "\n";
    log << T << " make again: " << strerrorname_np(Make(p, t)) << "\n";
    step(T + " mkdir over", mkdir(p.c_str(), 0755));
    step(T + " mknod over", mknod(p.c_str(), S_IFCHR | 0600, makedev(1, 5)));
    step(T + " symlink over", symlink("x", p.c_str()));
    step(T + " open O_CREAT|O_EXCL", Open(p, O_CREAT | O_EXCL | O_WRONLY));
    step(T + " create below", Open(p + "/child", O_CREAT | O_WRONLY));
    step(T + " fchmodat nofollow", fchmodat(AT_FDCWD, p.c_str(), 0604, AT_SYMLINK_NOFOLLOW));
    if (t != Type::kSymlink) step(T + " chmod", chmod(p.c_str(), 0604));
    step(T + " lchown", lchown(p.c_str(), 1234, 5678));
    const timespec times[2] = {{1000000000, 111}, {1200000000, 222}};
    step(T + " utimensat", utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW));
    struct stat st;
    if (lstat(p.c_str(), &st) == 0) {
      log << T << " times " << st.st_atim.tv_sec << "." << st.st_atim.tv_nsec << " "
          << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec << "\n";
    }
    for (const char* xattr : {"user.k", "trusted.k"}) {
      step(T + " lsetxattr " + xattr, lsetxattr(p.c_str(), xattr, "v", 1, 0));
      char v[8];
      ssize_t got = lgetxattr(p.c_str(), xattr, v, sizeof v);
      step(T + " lgetxattr " + xattr, got == 1 && v[0] == 'v' ? 0 : -1);
    }
    log << T << " after attrs: " << Describe(p) << "\n";
    step(T + " link", link(p.c_str(), (d + "/hard").c_str()));
    log << T << " after link: " << Describe(p) << " / " << Describe(d + "/hard") << "\n";
    step(T + " rmdir", rmdir(p.c_str()));
    step(T + " rename", rename(p.c_str(), (d + "/moved").c_str()));
    step(T + " rename back", rename((d + "/moved").c_str(), p.c_str()));
    step(T + " rmdir parent", rmdir(d.c_str()));
    step(T + " unlink", unlink(p.c_str()));
    step(T + " unlink hard", unlink((d + "/hard").c_str()));
    step(T + " rmdir node", rmdir(p.c_str()));
    log << T << " at the end: " << Describe(p) << "\n";
    step(T + " rmdir emptied parent", rmdir(d.c_str()));
  }

  // Renames of every type over every type, plain, NOREPLACE and EXCHANGE;
  // a non-empty directory as a target too.
  for (Type from : kTypes) {
    for (int target = 0; target <= 7; ++target) {
      const bool nonempty_dir = target == 7;
      const Type to = nonempty_dir ? Type::kDirectory : kTypes[target];
      const std::string what =
          std::string(Name(from)) + " onto " + (nonempty_dir ? "non-empty dir" : Name(to));
      for (unsigned flags : {0u, unsigned{RENAME_NOREPLACE}, unsigned{RENAME_EXCHANGE}}) {
        const std::string d = fresh();
        const std::string a = d + "/a", b = d + "/b";
        Make(a, from);
        Make(b, to);
        if (nonempty_dir) Make(b + "/inside", Type::kFifo);
        const int rc = renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), flags);
        log << what << " flags " << flags << ": " << Errno(rc) << "; a " << Describe(a) << "; b "
            << Describe(b) << "\n";
      }
    }
  }

  // A directory holding one node of each type cannot be removed until
  // they are gone.
  const std::string d = fresh();
  for (Type t : kTypes) Make(d + "/" + Name(t), t);
  step("rmdir of a directory holding every type", rmdir(d.c_str()));
  for (Type t : kTypes) {
    const std::string p = d + "/" + Name(t);
    step(std::string("remove ") + Name(t), t == Type::kDirectory ? rmdir(p.c_str()) : unlink(p.c_str()));
  }
  step("rmdir once empty", rmdir(d.c_str()));
  return log.str();
}

class FileTypesTest : public MountedTest {};

TEST_F(FileTypesTest, EveryTypeByEveryOperationMatchesExt4) {
  const std::string plain = store_.dir() + "/plain";
  ASSERT_EQ(mkdir(plain.c_str(), 0755), 0);
  const std::string want = Transcript(plain);
  const std::string got = Transcript(store_.mountpoint());
  std::istringstream w(want), g(got);
  std::string wl, gl;
  int line = 0;
  while (std::getline(w, wl)) {
    ++line;
    ASSERT_TRUE(std::getline(g, gl)) << "the mount's transcript ends at line " << line;
    EXPECT_EQ(gl, wl) << "line " << line;
  }
  EXPECT_FALSE(std::getline(g, gl)) << "the mount's transcript is longer: " << gl;
}

TEST_F(FileTypesTest, DeviceNodesSurviveRemountAndFsck) {
  ASSERT_EQ(Make(P("chr"), Type::kChar), 0);
  ASSERT_EQ(Make(P("blk"), Type::kBlock), 0);
  ASSERT_EQ(Make(P("fifo"), Type::kFifo), 0);
  ASSERT_EQ(lchown(P("chr").c_str(), 42, 43), 0);
  ASSERT_EQ(lsetxattr(P("blk").c_str(), "trusted.note", "disk", 4, 0), 0);
  ASSERT_EQ(link(P("chr").c_str(), P("chr2").c_str()), 0);
  const std::string chr = Describe(P("chr")), blk = Describe(P("blk")), fifo = Describe(P("fifo"));
  EXPECT_NE(chr.find("rdev 1:3"), std::string::npos) << chr;
  EXPECT_NE(blk.find("rdev 7:200"), std::string::npos) << blk;
  // The mount is nodev (libfuse's default), so the node opens no device.
  EXPECT_LT(open(P("chr").c_str(), O_RDONLY), 0);
  EXPECT_EQ(errno, EACCES);

  Remount();
  EXPECT_EQ(Describe(P("chr")), chr);
  EXPECT_EQ(Describe(P("chr2")), chr);
  EXPECT_EQ(Describe(P("blk")), blk);
  EXPECT_EQ(Describe(P("fifo")), fifo);
  char v[8];
  EXPECT_EQ(lgetxattr(P("blk").c_str(), "trusted.note", v, sizeof v), 4);
  EXPECT_EQ(store_.Unmount(), 0) << store_.log();
  CommandOutput fsck = Capture(MountedStore::BinDir() + "/ckptfs-fsck " + store_.store() + " 2>&1");
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
  ASSERT_TRUE(store_.Mount()) << store_.log();
}

}  // namespace
}  // namespace ckptfs::testing
