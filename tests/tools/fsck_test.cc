// ckptfs-fsck on real stores damaged in several ways: it must find each
// problem, exit as fsck(8) does, and repair without dropping a file.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "ckptfs/filesystem.h"
#include "format/superblock.h"
#include "store_image.h"

namespace ckptfs {
namespace {

class FsckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ckptfs-fsck-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store_ = dir_ + "/store.img";
    FormatOptions f;
    f.size = 128 << 20;
    f.segment_size = 4 << 20;
    ASSERT_TRUE(FileSystem::Format(store_, f).ok());
    auto fs = FileSystem::Open(store_, MountOptions{});
    ASSERT_TRUE(fs.ok());
    (*fs)->Start();
    auto d = (*fs)->Mkdir(1, "global_step10", 0755, 0, 0);
    ASSERT_TRUE(d.ok());
    std::mt19937 gen(1);
    for (int i = 0; i < 3; ++i) {
      std::string data(3 << 20, '\0');
      for (char& c : data) c = static_cast<char>(gen());
      auto f = (*fs)->Create(d->st_ino, "shard" + std::to_string(i), 0644, 0, 0);
      ASSERT_TRUE(f.ok());
      ASSERT_TRUE((*fs)->Write(f->st_ino, 0, data.data(), data.size()).ok());
      contents_.push_back(data);
      inos_.push_back(f->st_ino);
    }
    ASSERT_TRUE((*fs)->Close().ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs ckptfs-fsck; returns the exit code and keeps the output.
  int Fsck(const std::string& args = "") {
    std::string cmd = std::string(CKPTFS_BIN_DIR) + "/ckptfs-fsck " + args + " " + store_ +
                      " > " + dir_ + "/out.txt 2>&1";
    int rc = std::system(cmd.c_str());
    std::ifstream in(dir_ + "/out.txt");
    std::stringstream ss;
    ss << in.rdbuf();
    output_ = ss.str();
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  void FlipByte(uint64_t offset) { testing::FlipBit(store_, offset); }
  uint64_t FindOnDevice(const std::string& data) {
    return testing::FindInImage(store_, data, kDataStart);
  }

  std::string dir_, store_, output_;
  std::vector<std::string> contents_;
  std::vector<uint64_t> inos_;
};

TEST_F(FsckTest, CleanStoreExitsZero) {
  EXPECT_EQ(Fsck(), 0) << output_;
  EXPECT_NE(output_.find("clean"), std::string::npos);
  EXPECT_NE(output_.find("3 files"), std::string::npos) << output_;
}

TEST_F(FsckTest, FlippedDataBitIsFoundNamedAndRepairedWithoutDroppingTheFile) {
  uint64_t at = FindOnDevice(contents_[1]);
  ASSERT_NE(at, 0u);
  FlipByte(at + 1234);
  EXPECT_EQ(Fsck(), 4) << output_;
  EXPECT_NE(output_.find("checksum mismatch: /global_step10/shard1 bytes 0.."), std::string::npos)
      << output_;

  // The mounted store refuses to return the bad bytes.
  {
    auto fs = FileSystem::Open(store_, MountOptions{});
    ASSERT_TRUE(fs.ok());
    std::string buf(4096, '\0');
    auto r = (*fs)->Read(inos_[1], 0, buf.size(), buf.data());
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
    auto other = (*fs)->Read(inos_[0], 0, buf.size(), buf.data());
    EXPECT_TRUE(other.ok());
    EXPECT_EQ(buf, contents_[0].substr(0, 4096));
  }

  EXPECT_EQ(Fsck("--repair"), 1) << output_;
  EXPECT_NE(output_.find("/lost+found/"), std::string::npos) << output_;
  EXPECT_EQ(Fsck(), 0) << output_;

  auto fs = FileSystem::Open(store_, MountOptions{});
  ASSERT_TRUE(fs.ok());
  auto st = (*fs)->Lookup(1, "lost+found");
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE((*fs)->Lookup(st->st_ino, std::to_string(inos_[1])).ok());
  auto damaged = (*fs)->GetXattr(inos_[1], "user.ckptfs.damaged");
  ASSERT_TRUE(damaged.ok());
  EXPECT_EQ(damaged->substr(0, 2), "0+");
  // Bytes outside the damaged run are intact.
  std::string tail(4096, '\0');
  ASSERT_TRUE((*fs)->Read(inos_[1], contents_[1].size() - 4096, 4096, tail.data()).ok());
  EXPECT_EQ(tail, contents_[1].substr(contents_[1].size() - 4096));
}

// A run two files share (copy_file_range) is checked once and, when
// damaged, named in both; the repair moves both aside and keeps both.
TEST_F(FsckTest, DamagedSharedRunNamesEveryFileThatSharesIt) {
  {
    auto fs = FileSystem::Open(store_, MountOptions{});
    ASSERT_TRUE(fs.ok());
    (*fs)->Start();
    auto copy = (*fs)->Create(1, "milestone", 0644, 0, 0);
    ASSERT_TRUE(copy.ok());
    auto n = (*fs)->CopyRange(inos_[2], 0, copy->st_ino, 0, contents_[2].size());
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_TRUE((*fs)->Close().ok());
  }
  EXPECT_EQ(Fsck(), 0) << output_;
  EXPECT_NE(output_.find("4 files"), std::string::npos) << output_;
  uint64_t at = FindOnDevice(contents_[2]);
  ASSERT_NE(at, 0u);
  FlipByte(at + 99);
  EXPECT_EQ(Fsck(), 4) << output_;
  EXPECT_NE(output_.find("checksum mismatch: /global_step10/shard2 bytes 0.."), std::string::npos)
      << output_;
  EXPECT_NE(output_.find("checksum mismatch: /milestone bytes 0.."), std::string::npos) << output_;
  EXPECT_EQ(Fsck("--repair"), 1) << output_;
  EXPECT_EQ(Fsck(), 0) << output_;
}

TEST_F(FsckTest, DamagedSuperblockCopyIsRewritten) {
  FlipByte(kSuperblockOffsets[0] + 20);
  EXPECT_EQ(Fsck(), 4) << output_;
  EXPECT_NE(output_.find("superblock copy A"), std::string::npos) << output_;
  EXPECT_EQ(Fsck("--repair"), 1) << output_;
  EXPECT_EQ(Fsck(), 0) << output_;
}

TEST_F(FsckTest, DamagedLogBlockIsReportedAndMountRefuses) {
  // Two more commits so the damaged block has a later commit after it.
  {
    auto fs = FileSystem::Open(store_, MountOptions{});
    ASSERT_TRUE(fs.ok());
    ASSERT_TRUE((*fs)->Mkdir(1, "a", 0755, 0, 0).ok());
    ASSERT_TRUE((*fs)->Sync().ok());
    ASSERT_TRUE((*fs)->Mkdir(1, "b", 0755, 0, 0).ok());
    ASSERT_TRUE((*fs)->Close().ok());
  }
  // The log starts in segment 0; its second block begins after the first.
  std::ifstream in(store_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(kDataStart + 32));
  uint32_t first_len = 0;
  in.read(reinterpret_cast<char*>(&first_len), 4);
  FlipByte(kDataStart + first_len + 60);
  EXPECT_EQ(Fsck(), 4) << output_;
  EXPECT_NE(output_.find("metadata log damaged"), std::string::npos) << output_;
  auto fs = FileSystem::Open(store_, MountOptions{});
  EXPECT_TRUE(fs.status().IsCorruption()) << fs.status().ToString();
  EXPECT_EQ(Fsck("--repair"), 4) << output_;
}

TEST_F(FsckTest, ForeignFileIsAnOperationalError) {
  std::ofstream(store_, std::ios::trunc) << std::string(4 << 20, 'x');
  EXPECT_EQ(Fsck(), 8) << output_;
  EXPECT_NE(output_.find("not a ckptfs store"), std::string::npos) << output_;
}

TEST_F(FsckTest, BadArgumentsAreAUsageError) {
  EXPECT_EQ(Fsck("--no-such-flag"), 16) << output_;
}

}  // namespace
}  // namespace ckptfs
