// What a directory walk sees while its entries are renamed, made and
// removed (generic/736): every entry that stays is returned once, and the
// walk ends.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

using DirectoryWalkTest = MountedTest;

// Every name of `dir` with how often a walk returned it, calling `each`
// with every name but "." and "..". A walk that returns `limit` entries
// stops there: one that would never end fails its counts instead.
std::map<std::string, int> Walk(const std::string& dir, size_t limit,
                                const std::function<void(const std::string&)>& each = nullptr) {
  std::map<std::string, int> seen;
  DIR* d = opendir(dir.c_str());
  if (!d) return seen;
  size_t returned = 0;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    ++seen[name];
    if (++returned >= limit) break;
    if (each && name != "." && name != "..") each(name);
  }
  closedir(d);
  return seen;
}

// xfstests' readdir-while-renames: each entry read is renamed to a
// temporary name and back. The walk must end, and return each entry once.
TEST_F(DirectoryWalkTest, AWalkRenamingEachEntryItReadsSeesEachOnce) {
  constexpr int kFiles = 3000;
  const std::string dir = P("renamed");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  for (int i = 1; i <= kFiles; ++i) {
    const int fd = open((dir + "/" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  std::string error;
  const auto seen = Walk(dir, 3 * kFiles, [&](const std::string& name) {
    if (rename((dir + "/" + name).c_str(), (dir + "/TEMPFILE").c_str()) != 0 ||
        rename((dir + "/TEMPFILE").c_str(), (dir + "/" + name).c_str()) != 0) {
      error = name + ": " + std::strerror(errno);
    }
  });
  EXPECT_EQ(error, "");
  EXPECT_EQ(seen.size(), static_cast<size_t>(kFiles + 2));
  for (const auto& [name, times] : seen) EXPECT_EQ(times, 1) << name;
}

// Entries that exist for the whole walk are each returned once, while
// others are made, removed and renamed around them; a walk started over
// (rewinddir) after a remount, which rebuilds every directory from the log,
// still finds them all.
TEST_F(DirectoryWalkTest, EntriesThatStayAreSeenOnceWhileOthersComeAndGo) {
  constexpr int kStaying = 2000;
  const std::string dir = P("busy");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const auto touch = [](const std::string& path) {
    const int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) close(fd);
    return fd >= 0;
  };
  for (int i = 0; i < kStaying; ++i) ASSERT_TRUE(touch(dir + "/stay" + std::to_string(i)));
  for (int i = 0; i < kStaying; ++i) ASSERT_TRUE(touch(dir + "/gone" + std::to_string(i)));
  int step = 0;
  const auto seen = Walk(dir, 6 * kStaying, [&](const std::string&) {
    const std::string n = std::to_string(step++);
    if (step <= kStaying) unlink((dir + "/gone" + n).c_str());
    touch(dir + "/new" + n);
    rename((dir + "/new" + n).c_str(), (dir + "/moved" + n).c_str());
  });
  for (int i = 0; i < kStaying; ++i) {
    auto it = seen.find("stay" + std::to_string(i));
    EXPECT_TRUE(it != seen.end() && it->second == 1)
        << "stay" << i << " seen " << (it == seen.end() ? 0 : it->second) << " times";
  }
  for (const auto& [name, times] : seen) EXPECT_EQ(times, 1) << name;

  Remount();
  const auto after = Walk(dir, 10 * kStaying);
  for (int i = 0; i < kStaying; ++i) EXPECT_EQ(after.count("stay" + std::to_string(i)), 1u) << i;
}

}  // namespace
}  // namespace ckptfs::testing
