// What a small checkpoint file costs in FUSE requests. Each request is a
// round trip through the kernel and two context switches, the cost that
// bounds a small-file burst on few cores, so the requests per file are
// counted by opcode (the daemon's fuse_requests counters) and held to what
// the kernel's semantics need.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>

#include "common/mount_stats.h"
#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

class RoundTripsTest : public MountedTest {
 protected:
  // The daemon's request counters by opcode.
  std::map<std::string, uint64_t> Requests() {
    auto stats = tools::ReadMountStats(store_.mountpoint());
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    std::map<std::string, uint64_t> out;
    if (stats.ok()) {
      for (const auto& [op, n] : (*stats)["fuse_requests"].items()) out[op] = n.get<uint64_t>();
    }
    return out;
  }
  static std::map<std::string, uint64_t> Delta(const std::map<std::string, uint64_t>& before,
                                               const std::map<std::string, uint64_t>& after) {
    std::map<std::string, uint64_t> d;
    for (const auto& [op, n] : after) {
      const auto was = before.find(op);
      const uint64_t delta = n - (was == before.end() ? 0 : was->second);
      if (delta > 0) d[op] = delta;
    }
    return d;
  }
  static std::string Show(const std::map<std::string, uint64_t>& d) {
    std::string s;
    for (const auto& [op, n] : d) s += op + "=" + std::to_string(n) + " ";
    return s;
  }
};

// torch.save's pattern for a small file: create, write, fsync, close. The
// kernel asks the daemon for the name (LOOKUP), the parent's attributes
// (its create invalidated them), the CREATE, security.capability before
// the inode's first write, the WRITE, FSYNC and RELEASE. FLUSH is answered
// ENOSYS once, and the kernel sends no more of them.
TEST_F(RoundTripsTest, ASmallFileWrittenAndFsyncedCostsNoFlush) {
  ASSERT_EQ(mkdir(P("ckpt").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(P("ckpt/warmup"), "x", true));  // the one FLUSH the kernel sends
  constexpr int kFiles = 40;
  const std::string payload = Random(256 << 10, 7);
  const auto before = Requests();
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_TRUE(WriteFile(P("ckpt/f" + std::to_string(i)), payload, true));
  }
  const auto d = Delta(before, Requests());
  EXPECT_EQ(d.count("flush"), 0u) << Show(d);
  EXPECT_EQ(d.count("create") ? d.at("create") : 0, uint64_t{kFiles}) << Show(d);
  EXPECT_EQ(d.count("fsync") ? d.at("fsync") : 0, uint64_t{kFiles}) << Show(d);
  uint64_t total = 0;
  for (const auto& [op, n] : d) total += n;
  // 7 per file as above, one in two with a SETATTR of the times, and the
  // stats reads of this test.
  EXPECT_LE(total, uint64_t{kFiles} * 15 / 2 + 2) << Show(d);

  // Closing without FLUSH still publishes what was written: the kernel
  // writes the dirty pages back at close, and a remount finds them.
  Remount();
  for (int i = 0; i < kFiles; i += 13) EXPECT_EQ(ReadFile(P("ckpt/f" + std::to_string(i))), payload);
}

// Without fsync the bytes still reach the daemon by the time close(2)
// returns: the kernel writes the dirty pages back at close, and returns
// their errors, whether or not it sends FLUSH.
TEST_F(RoundTripsTest, CloseWritesBackWithoutAFlushRequest) {
  ASSERT_TRUE(WriteFile(P("warmup"), "x"));
  const std::string payload = Random(3 << 20, 8);
  const auto before = Requests();
  ASSERT_TRUE(WriteFile(P("unsynced"), payload, false));
  const auto d = Delta(before, Requests());
  EXPECT_EQ(d.count("flush"), 0u) << Show(d);
  EXPECT_GE(d.count("write") ? d.at("write") : 0, 3u) << "close wrote nothing back: " << Show(d);
}

}  // namespace
}  // namespace ckptfs::testing
