// A local store chooses per open whether read() goes through the kernel's
// page cache: a large file opened read-only (a restore's shard) reads past
// it, straight from the daemon; a small file, or one open for writing,
// keeps it; a writer beside such readers writes past it too, so they see
// its bytes at once; mmap maps every file. -o page_cache keeps them all in
// the cache. Each read past the cache reaches the daemon as READ requests,
// which its counters show.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string>

#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

class DirectReadsTest : public MountedTest {
 protected:
  // The READ requests the daemon has served (its fuse_requests counters).
  uint64_t ReadRequests() {
    char buf[16384];
    ssize_t n = getxattr(store_.mountpoint().c_str(), "user.ckptfs.stats.json", buf, sizeof buf);
    const std::string json(buf, static_cast<size_t>(std::max<ssize_t>(n, 0)));
    const size_t section = json.find("\"fuse_requests\"");
    EXPECT_NE(section, std::string::npos) << json;
    return section == std::string::npos ? 0 : JsonField(json.substr(section), "read");
  }
  // READ requests a whole read of `path` by a fresh O_RDONLY open costs.
  uint64_t RequestsToRead(const std::string& path, const std::string& want) {
    const uint64_t before = ReadRequests();
    EXPECT_EQ(ReadFile(path), want) << path;
    return ReadRequests() - before;
  }
};

TEST_F(DirectReadsTest, LargeReadOnlyOpensReadPastTheCacheSmallOnesKeepIt) {
  const std::string shard = Random(8 << 20, 1);
  const std::string small = Random(256 << 10, 2);
  ASSERT_TRUE(WriteFile(P("shard.pt"), shard, true));
  ASSERT_TRUE(WriteFile(P("small.json"), small, true));
  (void)RequestsToRead(P("shard.pt"), shard);
  (void)RequestsToRead(P("small.json"), small);
  // Read again: the shard's bytes come from the daemon each time, the
  // small file's from the cache.
  EXPECT_GE(RequestsToRead(P("shard.pt"), shard), 8u);
  EXPECT_EQ(RequestsToRead(P("small.json"), small), 0u);

  // -o page_cache: the shard stays in the cache too.
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  ASSERT_TRUE(store_.Mount({"page_cache"})) << store_.log();
  (void)RequestsToRead(P("shard.pt"), shard);
  EXPECT_EQ(RequestsToRead(P("shard.pt"), shard), 0u);
}

// Readers that read past the cache never see a writer's bytes late: a
// writer opened beside them writes past the cache as well, and a reader
// opened while a writer is open keeps the cache, where its bytes are.
TEST_F(DirectReadsTest, ReadersPastTheCacheSeeWritesAtOnce) {
  std::string want = Random(8 << 20, 3);
  ASSERT_TRUE(WriteFile(P("shard.pt"), want, true));
  const int reader = open(P("shard.pt").c_str(), O_RDONLY);
  ASSERT_GE(reader, 0);
  const int writer = open(P("shard.pt").c_str(), O_WRONLY);
  ASSERT_GE(writer, 0);
  for (off_t at : {off_t{0}, off_t{5 << 20} + 7, off_t{(8 << 20) - 3}}) {
    ASSERT_EQ(pwrite(writer, "XYZ", 3, at), 3);
    want.replace(static_cast<size_t>(at), 3, "XYZ");
    char got[3];
    ASSERT_EQ(pread(reader, got, 3, at), 3);
    EXPECT_EQ(std::string(got, 3), "XYZ") << "at " << at;
  }
  // A reader opened now, with the writer still open, sees the same.
  const int late_reader = open(P("shard.pt").c_str(), O_RDONLY);
  ASSERT_GE(late_reader, 0);
  std::string got;
  ASSERT_EQ(ReadToEnd(late_reader, &got), 0);
  EXPECT_TRUE(got == want);
  close(late_reader);
  close(writer);
  close(reader);
  EXPECT_TRUE(ReadFile(P("shard.pt")) == want);

  // Written through the cache (no reader past it open), not yet flushed:
  // a reader opened while the writer is open reads the new bytes.
  const int buffered = open(P("shard.pt").c_str(), O_WRONLY);
  ASSERT_GE(buffered, 0);
  ASSERT_EQ(pwrite(buffered, "buffered", 8, 4096), 8);
  want.replace(4096, 8, "buffered");
  EXPECT_TRUE(ReadFile(P("shard.pt")) == want);
  close(buffered);
  EXPECT_TRUE(ReadFile(P("shard.pt")) == want);
}

// numpy.memmap and safetensors map checkpoints shared: a file whose read()
// goes past the cache maps all the same.
TEST_F(DirectReadsTest, FilesReadPastTheCacheStillMapShared) {
  const std::string shard = Random((8 << 20) + 100, 4);
  ASSERT_TRUE(WriteFile(P("shard.safetensors"), shard, true));
  const int fd = open(P("shard.safetensors").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* map = mmap(nullptr, shard.size(), PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED) << strerror(errno);
  EXPECT_EQ(std::string(static_cast<const char*>(map), shard.size()), shard);
  std::string got(4096, '\0');
  ASSERT_EQ(pread(fd, got.data(), got.size(), 1 << 20), 4096);
  EXPECT_EQ(got, shard.substr(1 << 20, 4096));
  munmap(map, shard.size());
  close(fd);
}

}  // namespace
}  // namespace ckptfs::testing
