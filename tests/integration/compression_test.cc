// Compression through a real mount: `-o compress=`, the per-directory
// xattr as setfattr/getfattr see it, du and the stats showing physical
// usage, data surviving a daemon kill (what was fsynced) and a remount,
// fsck decoding every compressed run, and an unmodified PyTorch trainer
// checkpointing into a compressed directory and resuming bit-identically.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "file_util.h"
#include "mounted_store.h"
#include "tensor_data.h"

namespace ckptfs::testing {
namespace {

constexpr const char* kPython = "/usr/bin/python3";


class CompressionMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(store_.Format("1G"), 0);
    ASSERT_TRUE(store_.Mount(options_)) << store_.log();
  }
  void TearDown() override {
    if (store_.daemon_pid() > 0) EXPECT_EQ(store_.Unmount(), 0) << store_.log();
  }
  void Remount() {
    ASSERT_EQ(store_.Unmount(), 0) << store_.log();
    ASSERT_TRUE(store_.Mount(options_)) << store_.log();
  }
  std::string Stats() {
    char buf[8192];
    ssize_t n = getxattr(store_.mountpoint().c_str(), "user.ckptfs.stats.json", buf, sizeof buf);
    EXPECT_GT(n, 0) << strerror(errno);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }
  std::string P(const std::string& rel) { return store_.Path(rel); }

  std::vector<std::string> options_ = {"compress=zstd:3"};
  MountedStore store_;
};

TEST_F(CompressionMountTest, CompressedFilesReadBackAndDuShowsPhysicalUsage) {
  const std::string w = Bf16Like(24 << 20, 1);
  ASSERT_TRUE(WriteFile(P("weights.bin"), w, /*fsync_it=*/true));
  ASSERT_EQ(MountedStore::Run("cp " + P("weights.bin") + " " + P("copy.bin") + " && sync"), 0);
  EXPECT_EQ(ReadFile(P("copy.bin")), w);
  struct stat st;
  ASSERT_EQ(stat(P("weights.bin").c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), w.size());
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, w.size() * 9 / 10) << "du shows stored bytes";
  const std::string stats = Stats();
  EXPECT_GT(JsonField(stats, "compressed_runs"), 0u) << stats;
  EXPECT_GT(JsonField(stats, "compression_ratio_milli"), 1100u) << stats;
  EXPECT_GT(JsonField(stats, "live_file_bytes"), JsonField(stats, "live_bytes")) << stats;
  // Cold reads come from the device and are decoded.
  Remount();
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  EXPECT_EQ(ReadFile(P("weights.bin")), w);
  EXPECT_GT(JsonField(Stats(), "runs_decoded"), 0u);
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  auto fsck = Capture(MountedStore::BinDir() + "/ckptfs-fsck " + store_.store() + " 2>&1");
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
  EXPECT_EQ(fsck.out.find("(0 compressed)"), std::string::npos) << fsck.out;
  ASSERT_TRUE(store_.Mount(options_)) << store_.log();
}

TEST_F(CompressionMountTest, DirectoryPolicyThroughSetfattrIsValidatedAndInherited) {
  options_ = {};  // the mount compresses nothing; the directory asks
  Remount();
  ASSERT_EQ(mkdir(P("ckpt").c_str(), 0755), 0);
  EXPECT_NE(MountedStore::Run("setfattr -n user.ckptfs.compress -v lz4 " + P("ckpt") + " 2>/dev/null"), 0);
  EXPECT_EQ(setxattr(P("ckpt").c_str(), "user.ckptfs.compress", "zstd:9x", 7, 0), -1);
  EXPECT_EQ(errno, EINVAL);
  ASSERT_EQ(MountedStore::Run("setfattr -n user.ckptfs.compress -v zstd:1 " + P("ckpt")), 0);
  ASSERT_EQ(mkdir(P("ckpt/step1").c_str(), 0755), 0);
  auto got = Capture("getfattr --absolute-names --only-values -n user.ckptfs.compress " + P("ckpt/step1"));
  EXPECT_EQ(got.out, "zstd:1");
  const std::string w = Bf16Like(8 << 20, 2);
  ASSERT_TRUE(WriteFile(P("ckpt/step1/w.bin"), w, true));
  ASSERT_TRUE(WriteFile(P("plain.bin"), w, true));
  const std::string stats = Stats();
  EXPECT_EQ(JsonField(stats, "compress_bytes_in"), w.size()) << stats;
  struct stat in_dir, plain;
  ASSERT_EQ(stat(P("ckpt/step1/w.bin").c_str(), &in_dir), 0);
  ASSERT_EQ(stat(P("plain.bin").c_str(), &plain), 0);
  EXPECT_LT(in_dir.st_blocks, plain.st_blocks);
  Remount();
  EXPECT_EQ(ReadFile(P("ckpt/step1/w.bin")), w);
}

TEST_F(CompressionMountTest, FsyncedCompressedDataSurvivesAKilledDaemon) {
  const std::string synced = Bf16Like(6 << 20, 3);
  ASSERT_TRUE(WriteFile(P("synced.bin"), synced, /*fsync_it=*/true));
  // Written after the fsync and never synced: may be absent, never torn
  // into something that is neither (the file is then absent or whole).
  const std::string later = Bf16Like(6 << 20, 4);
  ASSERT_TRUE(WriteFile(P("later.tmp"), later));
  ASSERT_EQ(rename(P("later.tmp").c_str(), P("later.bin").c_str()), 0);
  store_.Kill();
  ASSERT_TRUE(store_.Mount(options_)) << store_.log();
  EXPECT_EQ(ReadFile(P("synced.bin")), synced);
  if (access(P("later.bin").c_str(), F_OK) == 0) {
    EXPECT_EQ(ReadFile(P("later.bin")), later) << "renamed after its write: whole or absent";
  }
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  auto fsck = Capture(MountedStore::BinDir() + "/ckptfs-fsck " + store_.store() + " 2>&1");
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
  ASSERT_TRUE(store_.Mount(options_)) << store_.log();
}

TEST_F(CompressionMountTest, PyTorchTrainerCheckpointsCompressedAndResumesBitIdentically) {
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " (python3-torch) is required";
  const std::string data = (std::filesystem::path(__FILE__).parent_path() / "data").string();
  const std::string ref = store_.dir() + "/ref";
  auto py = [&](const std::string& script, const std::string& args) {
    return std::string(kPython) + " " + data + "/" + script + " " + args + " >/dev/null";
  };
  ASSERT_EQ(MountedStore::Run(py("trainer.py", "--dir " + P("run") + " --steps 5 --every 2 --keep 2 --seed 7")), 0);
  ASSERT_EQ(MountedStore::Run(py("trainer.py", "--dir " + ref + " --steps 8 --every 2 --keep 2 --seed 7")), 0);
  EXPECT_GT(JsonField(Stats(), "compress_bytes_in"), 0u);
  store_.Kill();  // only what the trainer fsynced counts
  ASSERT_TRUE(store_.Mount(options_)) << store_.log();
  ASSERT_EQ(MountedStore::Run(py("trainer.py", "--dir " + P("run") + " --steps 8 --every 2 --keep 2 --resume --seed 7")), 0);
  Remount();
  EXPECT_EQ(MountedStore::Run(py("compare_ckpt.py", P("run") + " " + ref + " " + P("run/ckpt-000006.pt") + " " +
                                                        ref + "/ckpt-000006.pt")),
            0);
}

}  // namespace
}  // namespace ckptfs::testing
