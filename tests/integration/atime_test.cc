// atime through a mount: the kernel leaves it to a FUSE daemon, which moves
// it on the reads it sees (an open for reading, a directory opened to list)
// as relatime, strictatime or noatime say, and tells the kernel, so stat
// shows it at once (generic/003).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

// atime as `stat -c %x` asks for it: alone, so the kernel's cached
// attributes answer if they are still valid.
std::string Atime(const std::string& path) {
  struct statx stx;
  if (statx(AT_FDCWD, path.c_str(), 0, STATX_ATIME, &stx) != 0) return "stat failed";
  return std::to_string(stx.stx_atime.tv_sec) + "." + std::to_string(stx.stx_atime.tv_nsec);
}

// Opens `path` with `flags`, reads a byte or lists the directory, closes.
void Access(const std::string& path, int flags = O_RDONLY) {
  const int fd = open(path.c_str(), flags);
  ASSERT_GE(fd, 0) << path;
  char c;
  if ((flags & O_DIRECTORY) == 0) {
    (void)!read(fd, &c, 1);
    close(fd);
    return;
  }
  DIR* d = fdopendir(fd);
  while (readdir(d)) {
  }
  closedir(d);
}

using AtimeTest = MountedTest;

TEST_F(AtimeTest, RelatimeByDefaultNoatimeAndStrictatimeWhenAsked) {
  ASSERT_TRUE(WriteFile(P("f"), "data"));
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(P("d/inner"), "x"));
  // Times come from the kernel's coarse clock: a tick later, a moved atime
  // differs from the old one.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));

  std::string before = Atime(P("f"));
  Access(P("f"));
  EXPECT_NE(Atime(P("f")), before) << "the first read after a change moves atime";
  before = Atime(P("f"));
  Access(P("f"));
  Access(P("f"), O_RDONLY | O_NOATIME);
  EXPECT_EQ(Atime(P("f")), before) << "relatime: no move until the next change";
  ASSERT_TRUE(WriteFile(P("f"), "changed"));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  Access(P("f"), O_WRONLY);
  Access(P("f"), O_RDONLY | O_NOATIME);
  EXPECT_EQ(Atime(P("f")), before) << "writes and O_NOATIME opens are no reads";

  Access(P("d"), O_RDONLY | O_DIRECTORY);  // the first listing since "inner" was made
  before = Atime(P("d"));
  EXPECT_EQ(ReadFile(P("d/inner")), "x");
  Access(P("d"), O_RDONLY | O_DIRECTORY);
  EXPECT_EQ(Atime(P("d")), before) << "relatime for directories too";
  ASSERT_TRUE(WriteFile(P("d/new"), "y"));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  before = Atime(P("d"));
  EXPECT_EQ(ReadFile(P("d/inner")), "x");
  EXPECT_EQ(Atime(P("d")), before) << "a lookup in a directory does not read it";
  Access(P("d"), O_RDONLY | O_DIRECTORY);
  EXPECT_NE(Atime(P("d")), before) << "listing it does";

  const std::string moved = Atime(P("d"));
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  ASSERT_TRUE(store_.Mount({"noatime"})) << store_.log();
  EXPECT_EQ(Atime(P("d")), moved) << "kept across a remount";
  before = Atime(P("f"));  // not moved since the write "changed"
  Access(P("f"));
  EXPECT_EQ(Atime(P("f")), before) << "noatime";

  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  ASSERT_TRUE(store_.Mount({"strictatime"})) << store_.log();
  Access(P("f"));
  before = Atime(P("f"));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // past the clock's tick
  Access(P("f"));
  EXPECT_NE(Atime(P("f")), before) << "strictatime: every read";
}

}  // namespace
}  // namespace ckptfs::testing
