// FUSE over io_uring: with the fuse module's enable_uring on and
// -o uring=on, every request but FORGET reaches the daemon through the
// ring, and the mount behaves as it does over /dev/fuse: every kind of
// request and reply (data both ways, errors, sized xattr replies, large
// directory listings), fsyncs blocked in handlers beside other requests, a
// kill and a remount. Without the kernel's offer, uring=on refuses to mount
// and says why, and auto falls back to /dev/fuse.
//
// The test turns enable_uring on (and off, for the refusal) and puts back
// what it found, whatever happens. The rest of the integration suite runs
// over the ring too in CI (tools/run-tests.sh, CKPTFS_TEST_MOUNT_OPTIONS).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/mount_stats.h"
#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

constexpr const char* kEnableUring = "/sys/module/fuse/parameters/enable_uring";

std::string ReadSetting() {
  std::ifstream in(kEnableUring);
  std::string v;
  in >> v;
  return v;
}

bool WriteSetting(const std::string& v) {
  std::ofstream out(kEnableUring);
  out << v;
  out.flush();
  return out.good();
}

class UringChannelTest : public MountedTest {
 protected:
  void SetUp() override {
    was_ = ReadSetting();
    if (was_.empty()) GTEST_SKIP() << "this kernel has no FUSE over io_uring (" << kEnableUring << ")";
    ASSERT_TRUE(WriteSetting("Y"));
    ASSERT_EQ(store_.Format(size_), 0);
    ASSERT_TRUE(store_.Mount({"uring=on"})) << store_.log();
  }
  void TearDown() override {
    MountedTest::TearDown();
    if (!was_.empty()) WriteSetting(was_);
  }

  nlohmann::json Stats() {
    auto stats = tools::ReadMountStats(store_.mountpoint());
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    return stats.ok() ? *stats : nlohmann::json::object();
  }
  // Requests the daemon counted, FORGETs (which stay on /dev/fuse) aside.
  uint64_t Requests() {
    uint64_t n = 0;
    const nlohmann::json stats = Stats();
    for (const auto& [op, count] : stats["fuse_requests"].items()) {
      if (op != "forget" && op != "batch_forget") n += count.get<uint64_t>();
    }
    return n;
  }

  std::string was_;
};

TEST_F(UringChannelTest, EveryKindOfRequestTravelsTheRing) {
  nlohmann::json stats = Stats();
  ASSERT_EQ(stats["channel"], "io_uring") << store_.log();
  const uint64_t requests_before = Requests();
  const uint64_t ring_before = Stats()["ring_requests"].get<uint64_t>();

  // Data both ways: a large file read past the page cache, a small one
  // through it, O_DIRECT, mmap.
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  const std::string shard = Random(9 << 20, 1);
  const std::string small = Random(5000, 2);
  ASSERT_TRUE(WriteFile(P("d/shard.pt"), shard, true));
  ASSERT_TRUE(WriteFile(P("d/small"), small, true));
  EXPECT_EQ(ReadFile(P("d/shard.pt")), shard);
  EXPECT_EQ(ReadFile(P("d/small")), small);
  {
    const int fd = open(P("d/direct").c_str(), O_RDWR | O_CREAT | O_DIRECT, 0644);
    ASSERT_GE(fd, 0);
    void* block = nullptr;
    ASSERT_EQ(posix_memalign(&block, 4096, 1 << 20), 0);
    std::memcpy(block, shard.data(), 1 << 20);
    EXPECT_EQ(pwrite(fd, block, 1 << 20, 4096), 1 << 20);
    std::memset(block, 0, 1 << 20);
    EXPECT_EQ(pread(fd, block, 1 << 20, 4096), 1 << 20);
    EXPECT_EQ(std::memcmp(block, shard.data(), 1 << 20), 0);
    free(block);
    close(fd);
  }
  {
    const int fd = open(P("d/shard.pt").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    void* map = mmap(nullptr, shard.size(), PROT_READ, MAP_SHARED, fd, 0);
    ASSERT_NE(map, MAP_FAILED);
    EXPECT_EQ(std::memcmp(map, shard.data(), shard.size()), 0);
    munmap(map, shard.size());
    close(fd);
  }

  // Names, links, attributes.
  ASSERT_EQ(rename(P("d/small").c_str(), P("d/small2").c_str()), 0);
  ASSERT_EQ(link(P("d/small2").c_str(), P("d/hard").c_str()), 0);
  ASSERT_EQ(symlink("small2", P("d/sym").c_str()), 0);
  char target[64] = {};
  EXPECT_EQ(readlink(P("d/sym").c_str(), target, sizeof target), 6);
  EXPECT_STREQ(target, "small2");
  ASSERT_EQ(truncate(P("d/hard").c_str(), 100), 0);
  struct stat st;
  ASSERT_EQ(stat(P("d/small2").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 100);
  EXPECT_EQ(st.st_nlink, 2u);
  ASSERT_EQ(chmod(P("d/small2").c_str(), 0600), 0);

  // xattrs: the size query, a buffer too small (ERANGE), the list.
  ASSERT_EQ(setxattr(P("d/small2").c_str(), "user.step", "1000", 4, 0), 0);
  EXPECT_EQ(getxattr(P("d/small2").c_str(), "user.step", nullptr, 0), 4);
  char value[8];
  EXPECT_EQ(getxattr(P("d/small2").c_str(), "user.step", value, 2), -1);
  EXPECT_EQ(errno, ERANGE);
  EXPECT_EQ(getxattr(P("d/small2").c_str(), "user.step", value, sizeof value), 4);
  char names[256];
  EXPECT_GT(listxattr(P("d/small2").c_str(), names, sizeof names), 0);

  // Error replies.
  EXPECT_EQ(open(P("d/missing").c_str(), O_RDONLY), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(mkdir(P("d").c_str(), 0755), -1);
  EXPECT_EQ(errno, EEXIST);

  // A directory listing of several replies, space, fallocate, unlink.
  for (int i = 0; i < 600; ++i) {
    ASSERT_TRUE(WriteFile(P("d/entry-with-a-long-name-" + std::to_string(i)), "x")) << i;
  }
  int entries = 0;
  DIR* dir = opendir(P("d").c_str());
  ASSERT_NE(dir, nullptr);
  while (readdir(dir) != nullptr) ++entries;
  closedir(dir);
  EXPECT_EQ(entries, 600 + 7);  // . .. shard.pt direct small2 hard sym
  struct statvfs vfs;
  ASSERT_EQ(statvfs(store_.mountpoint().c_str(), &vfs), 0);
  EXPECT_GT(vfs.f_bavail, 0u);
  {
    const int fd = open(P("d/reserved").c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(fallocate(fd, 0, 0, 8 << 20), 0);
    close(fd);
  }
  ASSERT_EQ(unlink(P("d/hard").c_str()), 0);

  // All of it, FORGETs aside, came through the ring.
  const uint64_t requests = Requests() - requests_before;
  const uint64_t ring = Stats()["ring_requests"].get<uint64_t>() - ring_before;
  EXPECT_GT(requests, 1000u);
  EXPECT_GE(ring, requests) << "requests bypassed the ring: " << ring << " of " << requests;

  // And it is all in the store.
  Remount();
  EXPECT_EQ(ReadFile(P("d/shard.pt")), shard);
  EXPECT_EQ(ReadFile(P("d/small2")), small.substr(0, 100));
}

// A worker blocked in an fsync holds only its own entry: eight writers
// that each fsync every file finish, and their fsyncs share commits.
TEST_F(UringChannelTest, FsyncsBlockedInHandlersLeaveTheQueueServing) {
  constexpr int kWriters = 8, kFiles = 25;
  const std::string payload = Random(64 << 10, 3);
  std::atomic<int> written{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int f = 0; f < kFiles; ++f) {
        if (WriteFile(P("w" + std::to_string(w) + "-" + std::to_string(f)), payload, true)) ++written;
      }
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(written.load(), kWriters * kFiles);
  nlohmann::json stats = Stats();
  EXPECT_EQ(stats["channel"], "io_uring");
  EXPECT_GE(stats["fuse_requests"]["fsync"].get<uint64_t>(), uint64_t{kWriters * kFiles});
  EXPECT_LT(stats["store"]["commits"].get<uint64_t>(), uint64_t{kWriters * kFiles})
      << "no two fsyncs were in their handlers at once";
}

TEST_F(UringChannelTest, AKilledDaemonLosesNothingItAcknowledged) {
  const std::string payload = Random(3 << 20, 4);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(WriteFile(P("f" + std::to_string(i)), payload, true));
  store_.Kill();
  ASSERT_TRUE(store_.Mount({"uring=on"})) << store_.log();
  EXPECT_EQ(Stats()["channel"], "io_uring");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ReadFile(P("f" + std::to_string(i))), payload) << i;
}

TEST_F(UringChannelTest, OnRefusesToMountWhereTheKernelOffersNoRingAndAutoFallsBack) {
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  ASSERT_TRUE(WriteSetting("N"));
  EXPECT_FALSE(store_.Mount({"uring=on"}));
  EXPECT_NE(store_.log().find("enable_uring is N"), std::string::npos) << store_.log();
  ASSERT_TRUE(store_.Mount({"uring=auto"})) << store_.log();
  EXPECT_EQ(Stats()["channel"], "dev_fuse");
  EXPECT_EQ(Stats()["ring_requests"], 0);
  ASSERT_TRUE(WriteFile(P("a"), "still served", true));
  EXPECT_EQ(ReadFile(P("a")), "still served");
}

}  // namespace
}  // namespace ckptfs::testing
