// File handles (name_to_handle_at, open_by_handle_at, as NFS export and
// backup tools use them) stay valid while the file exists: after the kernel
// has dropped its inodes, after a remount, and refused as stale once the
// file is gone (generic/426, 467, 477, 756, 777).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

struct Handle {
  std::unique_ptr<char[]> bytes;
  file_handle* get() const { return reinterpret_cast<file_handle*>(bytes.get()); }
};

// The handle of `path`, or one of no bytes with the error in `error`.
Handle HandleOf(const std::string& path, std::string* error) {
  Handle h{std::make_unique<char[]>(sizeof(file_handle) + MAX_HANDLE_SZ)};
  h.get()->handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  if (name_to_handle_at(AT_FDCWD, path.c_str(), h.get(), &mount_id, 0) != 0) {
    *error = path + ": name_to_handle_at: " + std::strerror(errno);
  }
  return h;
}

// Opens the handle on the mount at `mountpoint` and reads the file whole
// ("" for a directory, which it lists instead); errno's name on failure.
std::string ReadByHandle(const std::string& mountpoint, const Handle& h) {
  const int mount_fd = open(mountpoint.c_str(), O_RDONLY | O_DIRECTORY);
  if (mount_fd < 0) return std::string("open mount: ") + std::strerror(errno);
  const int fd = open_by_handle_at(mount_fd, h.get(), O_RDONLY);
  const int err = errno;
  close(mount_fd);
  if (fd < 0) return err == ESTALE ? "ESTALE" : std::string("open_by_handle_at: ") + std::strerror(err);
  std::string out;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buf[65536];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// Has the kernel forget every unused dentry and inode, this mount's too, so
// a handle can only be opened by asking the daemon.
void DropKernelCaches() {
  sync();
  std::ofstream("/proc/sys/vm/drop_caches") << "2\n";
}

using FileHandleTest = MountedTest;

TEST_F(FileHandleTest, HandlesOpenTheirFilesAfterTheKernelForgotThemAndAfterARemount) {
  const std::string data = Random(300000, 3);
  ASSERT_TRUE(WriteFile(P("f"), data, /*fsync_it=*/true));
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(P("d/g"), "in a directory", true));
  std::string error;
  const Handle file = HandleOf(P("f"), &error);
  const Handle dir = HandleOf(P("d"), &error);
  const Handle nested = HandleOf(P("d/g"), &error);
  ASSERT_EQ(error, "");

  EXPECT_TRUE(ReadByHandle(store_.mountpoint(), file) == data);
  DropKernelCaches();
  EXPECT_TRUE(ReadByHandle(store_.mountpoint(), file) == data);
  EXPECT_EQ(ReadByHandle(store_.mountpoint(), dir), "");
  EXPECT_EQ(ReadByHandle(store_.mountpoint(), nested), "in a directory");

  Remount();
  EXPECT_TRUE(ReadByHandle(store_.mountpoint(), file) == data);
  EXPECT_EQ(ReadByHandle(store_.mountpoint(), nested), "in a directory");
  EXPECT_EQ(ReadByHandle(store_.mountpoint(), dir), "");
}

TEST_F(FileHandleTest, AHandleOfARemovedFileIsStale) {
  ASSERT_TRUE(WriteFile(P("gone"), "soon", true));
  ASSERT_EQ(mkdir(P("gone-dir").c_str(), 0755), 0);
  std::string error;
  const Handle file = HandleOf(P("gone"), &error);
  const Handle dir = HandleOf(P("gone-dir"), &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(unlink(P("gone").c_str()), 0);
  ASSERT_EQ(rmdir(P("gone-dir").c_str()), 0);
  DropKernelCaches();
  EXPECT_EQ(ReadByHandle(store_.mountpoint(), file), "ESTALE");
  EXPECT_EQ(ReadByHandle(store_.mountpoint(), dir), "ESTALE");
  Remount();
  EXPECT_EQ(ReadByHandle(store_.mountpoint(), file), "ESTALE");
}

}  // namespace
}  // namespace ckptfs::testing
