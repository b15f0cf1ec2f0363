// The core FileSystem over a real backing file: operations, remount and
// space reuse, without FUSE in the way.
#include "ckptfs/filesystem.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

namespace ckptfs {
namespace {

class FileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ckptfs-fs-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store_ = dir_ + "/store.img";
  }
  void TearDown() override {
    fs_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Format(uint64_t size, uint64_t segment = 2 << 20) {
    FormatOptions f;
    f.size = size;
    f.segment_size = segment;
    Status s = FileSystem::Format(store_, f);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Mount() {
    auto r = FileSystem::Open(store_, mount_options_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    fs_ = std::move(r).value();
    fs_->Start();
  }
  static MountOptions SmallMount() {
    MountOptions m;
    m.memory_budget = 16 << 20;
    return m;
  }
  MountOptions mount_options_ = SmallMount();

  void Remount() {
    ASSERT_TRUE(fs_->Close().ok());
    fs_.reset();
    Mount();
  }

  uint64_t MakeFile(std::string_view name, const std::string& content, uint64_t parent = 1) {
    auto st = fs_->Create(parent, name, 0644, 0, 0);
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    if (!st.ok()) return 0;
    auto w = fs_->Write(st->st_ino, 0, content.data(), content.size());
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return st->st_ino;
  }
  std::string ReadAll(uint64_t ino) {
    auto st = fs_->GetAttr(ino);
    EXPECT_TRUE(st.ok());
    std::string out(static_cast<size_t>(st->st_size), '\0');
    auto r = fs_->Read(ino, 0, out.size(), out.data());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return out;
  }
  static std::string Random(size_t n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(gen());
    return s;
  }

  std::string dir_, store_;
  std::unique_ptr<FileSystem> fs_;
};

TEST_F(FileSystemTest, AFormatThatFailsLeavesTheFileAsItFoundIt) {
  auto size_of = [](const std::string& path) -> int64_t {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
  };
  FormatOptions f;
  f.segment_size = 2 << 20;
  // Too small for a store: nothing is created.
  f.size = 4 << 20;
  EXPECT_EQ(FileSystem::Format(store_, f).code(), Status::Code::kInvalid);
  EXPECT_EQ(size_of(store_), -1);
  // Over a store, without force: refused before the file grows.
  f.size = 32 << 20;
  ASSERT_TRUE(FileSystem::Format(store_, f).ok());
  f.size = 64 << 20;
  Status again = FileSystem::Format(store_, f);
  EXPECT_EQ(again.code(), Status::Code::kExists) << again.ToString();
  EXPECT_EQ(size_of(store_), 32 << 20);
  // A file that cannot grow that far, or be allocated once grown, goes
  // back to its size.
  const std::string small = (std::filesystem::path(dir_) / "small").string();
  {
    std::FILE* out = std::fopen(small.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fputs("hello", out);
    std::fclose(out);
  }
  f.size = uint64_t{1} << 50;
  Status huge = FileSystem::Format(small, f);
  EXPECT_FALSE(huge.ok());
  EXPECT_EQ(size_of(small), 5) << huge.ToString();
}

// atime moves as the mount's policy says, as the kernel decides it for a
// local filesystem: relatime after a change or once a day, strictatime on
// every read, noatime never, and nodiratime leaves directories alone.
TEST_F(FileSystemTest, ReadsMoveAtimeAsThePolicySays) {
  Format(64 << 20);
  Mount();
  const uint64_t ino = MakeFile("f", "data");
  auto mkdir = fs_->Mkdir(1, "d", 0755, 0, 0);
  ASSERT_TRUE(mkdir.ok());
  const auto atime = [&](uint64_t i) { return fs_->GetAttr(i)->st_atim; };
  const auto same = [](timespec a, timespec b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; };
  // Sets atime to `days` ago, and mtime and ctime a second before it.
  const auto age = [&](uint64_t i, int days) {
    AttrChange c;
    c.set_atime = c.set_mtime = c.set_ctime = true;
    c.atime = timespec{time(nullptr) - days * 86400, 0};
    c.mtime = c.ctime = timespec{c.atime.tv_sec - 1, 0};
    ASSERT_TRUE(fs_->SetAttr(i, c).ok());
  };

  // relatime: the first read after a change moves it, the next does not.
  // (A tick of the clock later, so the moved atime differs from the old.)
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  timespec before = atime(ino);
  EXPECT_TRUE(*fs_->NoteAccess(ino));  // atime == mtime since the write
  EXPECT_FALSE(same(atime(ino), before));
  before = atime(ino);
  EXPECT_FALSE(*fs_->NoteAccess(ino));
  EXPECT_TRUE(same(atime(ino), before));
  age(ino, 0);  // newer than mtime and ctime, and less than a day old
  EXPECT_FALSE(*fs_->NoteAccess(ino));
  age(ino, 2);  // but two days old
  EXPECT_TRUE(*fs_->NoteAccess(ino));
  EXPECT_TRUE(*fs_->NoteAccess(mkdir->st_ino));
  const timespec moved = atime(ino);
  Remount();
  EXPECT_TRUE(same(atime(ino), moved)) << "an atime update is logged like any change";

  mount_options_.atime = AtimePolicy::kStrictatime;
  mount_options_.nodiratime = true;
  Remount();
  EXPECT_TRUE(*fs_->NoteAccess(ino));
  EXPECT_TRUE(*fs_->NoteAccess(ino));
  age(mkdir->st_ino, 2);
  EXPECT_FALSE(*fs_->NoteAccess(mkdir->st_ino));

  mount_options_.atime = AtimePolicy::kNoatime;
  mount_options_.nodiratime = false;
  Remount();
  age(ino, 2);
  EXPECT_FALSE(*fs_->NoteAccess(ino));
  EXPECT_FALSE(*fs_->NoteAccess(mkdir->st_ino));

  mount_options_ = SmallMount();
  mount_options_.read_only = true;
  Remount();
  EXPECT_FALSE(*fs_->NoteAccess(ino)) << "a read-only store writes nothing, atime neither";
  EXPECT_TRUE(fs_->NoteAccess(12345).status().IsNotFound());
}

TEST_F(FileSystemTest, WrittenFilesSurviveRemount) {
  Format(64 << 20);
  Mount();
  std::string big = Random(3 << 20, 1);
  uint64_t ino = MakeFile("big", big);
  ASSERT_TRUE(fs_->Mkdir(1, "sub", 0755, 0, 0).ok());
  Remount();
  auto st = fs_->Lookup(1, "big");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->st_ino, ino);
  EXPECT_EQ(ReadAll(ino), big);
  EXPECT_TRUE(fs_->Lookup(1, "sub").ok());
}

TEST_F(FileSystemTest, OverwritesAndSparseRangesReadBackExactly) {
  Format(64 << 20);
  Mount();
  uint64_t ino = MakeFile("f", std::string(10000, 'a'));
  std::string mid(3000, 'b');
  ASSERT_TRUE(fs_->Write(ino, 2500, mid.data(), mid.size()).ok());
  ASSERT_TRUE(fs_->Write(ino, 20000, "z", 1).ok());  // leaves a hole
  std::string want(20001, '\0');
  std::fill(want.begin(), want.begin() + 10000, 'a');
  std::fill(want.begin() + 2500, want.begin() + 5500, 'b');
  want[20000] = 'z';
  EXPECT_EQ(ReadAll(ino), want);
  Remount();
  EXPECT_EQ(ReadAll(ino), want);
}

TEST_F(FileSystemTest, TruncateDownThenUpReadsZeros) {
  Format(64 << 20);
  Mount();
  uint64_t ino = MakeFile("f", std::string(8192, 'x'));
  AttrChange c;
  c.set_size = true;
  c.size = 100;
  ASSERT_TRUE(fs_->SetAttr(ino, c).ok());
  c.size = 8192;
  ASSERT_TRUE(fs_->SetAttr(ino, c).ok());
  std::string want(8192, '\0');
  std::fill(want.begin(), want.begin() + 100, 'x');
  EXPECT_EQ(ReadAll(ino), want);
}

TEST_F(FileSystemTest, UnlinkedOpenFileStaysReadableUntilReleased) {
  Format(64 << 20);
  Mount();
  std::string data = Random(100000, 2);
  uint64_t ino = MakeFile("f", data);
  ASSERT_TRUE(fs_->OpenFile(ino, O_RDWR).ok());
  fs_->Forget(ino, 1);  // the kernel's lookup from Create
  ASSERT_TRUE(fs_->Unlink(1, "f").ok());
  EXPECT_TRUE(fs_->Lookup(1, "f").status().IsNotFound());
  EXPECT_EQ(ReadAll(ino), data);
  fs_->ReleaseFile(ino);
  EXPECT_TRUE(fs_->GetAttr(ino).status().IsNotFound());
}

TEST_F(FileSystemTest, RenameReplacesAndExchanges) {
  Format(64 << 20);
  Mount();
  uint64_t a = MakeFile("a", "AAA");
  uint64_t b = MakeFile("b", "BBB");
  EXPECT_EQ(fs_->Rename(1, "a", 1, "b", RENAME_NOREPLACE).code(), Status::Code::kExists);
  ASSERT_TRUE(fs_->Rename(1, "a", 1, "b", RENAME_EXCHANGE).ok());
  EXPECT_EQ(fs_->Lookup(1, "a")->st_ino, b);
  EXPECT_EQ(fs_->Lookup(1, "b")->st_ino, a);
  ASSERT_TRUE(fs_->Rename(1, "a", 1, "b", 0).ok());
  EXPECT_TRUE(fs_->Lookup(1, "a").status().IsNotFound());
  EXPECT_EQ(ReadAll(fs_->Lookup(1, "b")->st_ino), "BBB");
  Remount();
  EXPECT_EQ(ReadAll(fs_->Lookup(1, "b")->st_ino), "BBB");
}

TEST_F(FileSystemTest, DirectoryRulesHold) {
  Format(64 << 20);
  Mount();
  auto d = fs_->Mkdir(1, "d", 0755, 0, 0);
  ASSERT_TRUE(d.ok());
  auto inner = fs_->Mkdir(d->st_ino, "inner", 0755, 0, 0);
  ASSERT_TRUE(inner.ok());
  EXPECT_EQ(fs_->GetAttr(d->st_ino)->st_nlink, 3u);
  EXPECT_EQ(fs_->Rmdir(1, "d").code(), Status::Code::kNotEmpty);
  EXPECT_EQ(fs_->Rename(1, "d", inner->st_ino, "loop", 0).code(), Status::Code::kInvalid);
  EXPECT_EQ(fs_->Unlink(1, "d").code(), Status::Code::kIsDirectory);
  ASSERT_TRUE(fs_->Rmdir(d->st_ino, "inner").ok());
  ASSERT_TRUE(fs_->Rmdir(1, "d").ok());
  EXPECT_EQ(fs_->GetAttr(1)->st_nlink, 2u);
}

TEST_F(FileSystemTest, FullStoreSaysNoSpaceAndRecoversAfterDelete) {
  Format(32 << 20);  // 15 segments of 2 MiB, a few reserved
  Mount();
  std::string chunk = Random(1 << 20, 3);
  auto st = fs_->Create(1, "filler", 0644, 0, 0);
  ASSERT_TRUE(st.ok());
  uint64_t keep = MakeFile("keep", "precious");
  Status last;
  uint64_t off = 0;
  for (int i = 0; i < 64; ++i, off += chunk.size()) {
    auto w = fs_->Write(st->st_ino, off, chunk.data(), chunk.size());
    if (!w.ok()) {
      last = w.status();
      break;
    }
  }
  ASSERT_TRUE(last.IsNoSpace()) << last.ToString();
  EXPECT_EQ(ReadAll(keep), "precious");
  fs_->Forget(st->st_ino, 1);
  ASSERT_TRUE(fs_->Unlink(1, "filler").ok());
  uint64_t again = MakeFile("again", chunk);
  EXPECT_EQ(ReadAll(again), chunk);
  Remount();
  EXPECT_EQ(ReadAll(fs_->Lookup(1, "keep")->st_ino), "precious");
  EXPECT_EQ(ReadAll(fs_->Lookup(1, "again")->st_ino), chunk);
}

TEST_F(FileSystemTest, SpaceOfDeletedFilesIsReused) {
  Format(64 << 20);
  Mount();
  std::string chunk = Random(4 << 20, 4);
  // Write and delete far more than the store holds.
  for (int round = 0; round < 40; ++round) {
    const std::string name = std::string("f").append(std::to_string(round));
    uint64_t ino = MakeFile(name, chunk);
    ASSERT_NE(ino, 0u);
    fs_->Forget(ino, 1);
    ASSERT_TRUE(fs_->Unlink(1, name).ok());
  }
  ASSERT_TRUE(fs_->Sync().ok());
  struct statvfs sv = fs_->StatFs();
  // Everything was deleted: all but the segments the open buffers and
  // the last deletions still hold is free again.
  EXPECT_GE(sv.f_bfree * sv.f_frsize + (8ull << 20), sv.f_blocks * sv.f_frsize);
}

TEST_F(FileSystemTest, FallocateModesPunchZeroAndKeepTheSize) {
  Format(64 << 20);
  Mount();
  const std::string data = Random(3 << 20, 5);
  const uint64_t ino = MakeFile("f", data);
  std::string want = data;
  // Punch a hole in the middle, zero a range at the end and past it, keep
  // the size with a keep-size allocation beyond the end.
  ASSERT_TRUE(fs_->Fallocate(ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 1 << 20).ok());
  want.replace(4096, 1 << 20, 1 << 20, '\0');
  ASSERT_TRUE(fs_->Fallocate(ino, FALLOC_FL_ZERO_RANGE, (3 << 20) - 100, 1000).ok());
  want.replace((3 << 20) - 100, 100, 100, '\0');
  want.resize((3 << 20) + 900, '\0');
  ASSERT_TRUE(fs_->Fallocate(ino, FALLOC_FL_KEEP_SIZE, 0, 8 << 20).ok());
  ASSERT_TRUE(fs_->Fallocate(ino, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 10 << 20, 4096).ok());
  EXPECT_EQ(fs_->GetAttr(ino)->st_size, static_cast<off_t>(want.size()));
  EXPECT_EQ(ReadAll(ino), want);
  // Modes that need data moved in place are refused.
  EXPECT_EQ(fs_->Fallocate(ino, FALLOC_FL_PUNCH_HOLE, 0, 4096).code(), Status::Code::kNotSupported);
  EXPECT_EQ(fs_->Fallocate(ino, FALLOC_FL_COLLAPSE_RANGE, 0, 4096).code(), Status::Code::kNotSupported);
  Remount();
  EXPECT_EQ(ReadAll(ino), want);
}

// fallocate reserves: st_blocks and statfs count the space at once, it
// survives a remount, and a write into it succeeds when the rest of the
// store is full; a reservation larger than the free space is refused.
TEST_F(FileSystemTest, FallocatedSpaceIsHeldForTheWritesIntoIt) {
  Format(64 << 20);
  Mount();
  const auto free_bytes = [&] {
    const struct statvfs sv = fs_->StatFs();
    return static_cast<uint64_t>(sv.f_bfree) * sv.f_frsize;
  };
  // Two bytes across a block boundary reserve both blocks (generic/568).
  const uint64_t small = fs_->Create(1, "small", 0644, 0, 0)->st_ino;
  ASSERT_TRUE(fs_->Fallocate(small, 0, 4095, 2).ok());
  EXPECT_EQ(fs_->GetAttr(small)->st_size, 4097);
  EXPECT_EQ(fs_->GetAttr(small)->st_blocks, 16);
  ASSERT_TRUE(fs_->Write(small, 4095, "ab", 2).ok());
  EXPECT_EQ(fs_->GetAttr(small)->st_blocks, 16);
  EXPECT_EQ(ReadAll(small), std::string(4095, '\0') + "ab");

  constexpr uint64_t kReserved = 20 << 20;
  const uint64_t before = free_bytes();
  const uint64_t held = fs_->Create(1, "held", 0644, 0, 0)->st_ino;
  ASSERT_TRUE(fs_->Fallocate(held, FALLOC_FL_KEEP_SIZE, 0, kReserved).ok());
  EXPECT_EQ(fs_->GetAttr(held)->st_size, 0);
  EXPECT_EQ(fs_->GetAttr(held)->st_blocks, static_cast<blkcnt_t>(kReserved / 512));
  EXPECT_LE(free_bytes() + kReserved, before);
  // Reserving what is reserved already takes nothing more.
  const uint64_t after = free_bytes();
  ASSERT_TRUE(fs_->Fallocate(held, FALLOC_FL_KEEP_SIZE, 0, kReserved).ok());
  EXPECT_EQ(free_bytes(), after);
  EXPECT_TRUE(fs_->Fallocate(held, FALLOC_FL_KEEP_SIZE, kReserved, 64 << 20).IsNoSpace());
  Remount();
  EXPECT_EQ(fs_->GetAttr(held)->st_blocks, static_cast<blkcnt_t>(kReserved / 512));
  EXPECT_LE(free_bytes() + kReserved, before);

  // Everyone else fills the store...
  const uint64_t filler = fs_->Create(1, "filler", 0644, 0, 0)->st_ino;
  const std::string chunk = Random(1 << 20, 11);
  Status full;
  for (uint64_t off = 0; full.ok() && off < (64ull << 20); off += chunk.size()) {
    full = fs_->Write(filler, off, chunk.data(), chunk.size()).status();
  }
  ASSERT_TRUE(full.IsNoSpace()) << full.ToString();
  // ...and the reserved range still takes all of its writes.
  const std::string data = Random(kReserved, 12);
  for (uint64_t off = 0; off < kReserved; off += 1 << 20) {
    auto w = fs_->Write(held, off, data.data() + off, 1 << 20);
    ASSERT_TRUE(w.ok()) << "at " << off << ": " << w.status().ToString();
  }
  EXPECT_EQ(ReadAll(held), data);
  Remount();
  EXPECT_EQ(ReadAll(held), data);
}

// df's Available is what fallocate can reserve: all of it can be taken
// (generic/103 reserves all but 512 KiB), a block more cannot, even right
// after deletions that wait for a commit.
TEST_F(FileSystemTest, FallocateTakesAllThatDfCallsAvailable) {
  Format(64 << 20);
  Mount();
  const uint64_t gone = MakeFile("gone", Random(8 << 20, 23));
  ASSERT_TRUE(fs_->Sync().ok());
  fs_->Forget(gone, 1);
  ASSERT_TRUE(fs_->Unlink(1, "gone").ok());
  const struct statvfs sv = fs_->StatFs();
  const uint64_t available = static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
  ASSERT_GT(available, 16u << 20);
  EXPECT_LE(sv.f_bavail, sv.f_bfree);
  const uint64_t ino = fs_->Create(1, "all", 0644, 0, 0)->st_ino;
  Status s = fs_->Fallocate(ino, 0, 0, available);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(fs_->StatFs().f_bavail, 0u);
  EXPECT_TRUE(fs_->Fallocate(ino, FALLOC_FL_KEEP_SIZE, available, 4096).IsNoSpace());
}

// Truncating or punching reserved space gives it back.
TEST_F(FileSystemTest, TruncateAndPunchReturnReservedSpace) {
  Format(64 << 20);
  Mount();
  const struct statvfs empty = fs_->StatFs();
  const uint64_t ino = fs_->Create(1, "f", 0644, 0, 0)->st_ino;
  ASSERT_TRUE(fs_->Fallocate(ino, 0, 0, 16 << 20).ok());
  EXPECT_LT(fs_->StatFs().f_bfree, empty.f_bfree);
  ASSERT_TRUE(fs_->Fallocate(ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 8 << 20).ok());
  EXPECT_EQ(fs_->GetAttr(ino)->st_blocks, (8 << 20) / 512);
  AttrChange c;
  c.set_size = true;
  c.size = 0;
  ASSERT_TRUE(fs_->SetAttr(ino, c).ok());
  EXPECT_EQ(fs_->GetAttr(ino)->st_blocks, 0);
  EXPECT_EQ(fs_->StatFs().f_bfree, empty.f_bfree);
}

// copy_file_range points the copy at the source's runs: no data is
// written, the shared bytes count once, holes stay holes, and either side
// may be overwritten or deleted without touching the other.
TEST_F(FileSystemTest, CopyRangeSharesTheStoredRuns) {
  Format(64 << 20);
  Mount();
  std::string data = Random((8 << 20) + 5000, 21);
  const uint64_t src = MakeFile("src", data);
  ASSERT_TRUE(fs_->Fallocate(src, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1 << 20, 4096).ok());
  data.replace(1 << 20, 4096, 4096, '\0');
  ASSERT_TRUE(fs_->Sync().ok());
  const StoreStats before = fs_->Stats();
  const uint64_t dst = fs_->Create(1, "dst", 0644, 0, 0)->st_ino;
  // A long length stops at the source's end.
  auto n = fs_->CopyRange(src, 0, dst, 0, 1ull << 40);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, data.size());
  ASSERT_TRUE(fs_->Sync().ok());
  StoreStats after = fs_->Stats();
  EXPECT_EQ(after.data_device_bytes, before.data_device_bytes);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(after.shared_bytes, data.size() - 4096);
  EXPECT_EQ(after.bytes_copied, data.size());
  EXPECT_EQ(ReadAll(dst), data);
  // An unaligned piece into the middle of another file.
  const uint64_t mid = MakeFile("mid", std::string(100000, 'x'));
  ASSERT_EQ(*fs_->CopyRange(src, 12345, mid, 777, 50000), 50000u);
  std::string mid_want(100000, 'x');
  mid_want.replace(777, 50000, data, 12345, 50000);
  EXPECT_EQ(ReadAll(mid), mid_want);
  // Overlapping ranges of one file are refused; past the end copies nothing.
  EXPECT_EQ(fs_->CopyRange(src, 0, src, 4096, 8192).status().code(), Status::Code::kInvalid);
  EXPECT_EQ(*fs_->CopyRange(src, data.size(), dst, 0, 10), 0u);
  // Overwrite the source, then delete it: the copy keeps the old bytes.
  ASSERT_TRUE(fs_->Write(src, 0, "new", 3).ok());
  fs_->Forget(src, 1);
  ASSERT_TRUE(fs_->Unlink(1, "src").ok());
  ASSERT_TRUE(fs_->Sync().ok());
  EXPECT_EQ(ReadAll(dst), data);
  Remount();
  EXPECT_EQ(ReadAll(fs_->Lookup(1, "dst")->st_ino), data);
  EXPECT_EQ(ReadAll(fs_->Lookup(1, "mid")->st_ino), mid_want);
  after = fs_->Stats();
  EXPECT_EQ(after.shared_bytes, 50000u);  // what "mid" shares with "dst"
  EXPECT_GE(after.live_bytes, data.size() - 4096);
  EXPECT_LT(after.live_bytes, data.size() + (1 << 20));
  // A sparse file larger than a slice (one lock hold): data past 100 MiB.
  const std::string tail = Random(1 << 20, 22);
  const uint64_t sparse = fs_->Create(1, "sparse", 0644, 0, 0)->st_ino;
  ASSERT_TRUE(fs_->Write(sparse, 100 << 20, tail.data(), tail.size()).ok());
  AttrChange grow;
  grow.set_size = true;
  grow.size = 150 << 20;
  ASSERT_TRUE(fs_->SetAttr(sparse, grow).ok());
  const uint64_t sparse_copy = fs_->Create(1, "sparse-copy", 0644, 0, 0)->st_ino;
  ASSERT_EQ(*fs_->CopyRange(sparse, 0, sparse_copy, 0, 200 << 20), 150u << 20);
  EXPECT_EQ(fs_->GetAttr(sparse_copy)->st_size, 150 << 20);
  std::string got(tail.size() + 8192, '\0');
  ASSERT_TRUE(fs_->Read(sparse_copy, (100 << 20) - 4096, got.size(), got.data()).ok());
  EXPECT_EQ(got, std::string(4096, '\0') + tail + std::string(4096, '\0'));
}

TEST_F(FileSystemTest, APunchedHoleFreesItsSpace) {
  Format(64 << 20);
  Mount();
  const uint64_t ino = MakeFile("f", Random(16 << 20, 6));
  ASSERT_TRUE(fs_->Sync().ok());
  const uint64_t live_before = fs_->Stats().live_bytes;
  ASSERT_TRUE(fs_->Fallocate(ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 16 << 20).ok());
  ASSERT_TRUE(fs_->Sync().ok());
  EXPECT_GE(live_before, 16u << 20);
  EXPECT_EQ(fs_->Stats().live_bytes, 0u);
  EXPECT_EQ(fs_->GetAttr(ino)->st_size, 16 << 20);
  EXPECT_EQ(ReadAll(ino), std::string(16 << 20, '\0'));
}

// A lent read keeps what it lends: the file deleted and its segments
// written over afterwards, the view still holds the bytes it was given.
TEST_F(FileSystemTest, ALentReadOutlivesTheFileAndItsSpace) {
  Format(32 << 20);
  Mount();
  std::string data = Random(3 << 20, 7);
  data.replace(1 << 20, 100000, 100000, '\0');
  const uint64_t ino = MakeFile("f", data);
  ASSERT_TRUE(fs_->Fallocate(ino, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1 << 20, 100000).ok());
  ReadView buffered, stored;
  ASSERT_TRUE(fs_->ReadInto(ino, 1000, data.size(), &buffered).ok());  // segment still in memory
  ASSERT_TRUE(fs_->Sync().ok());
  Remount();  // now every run comes from the device
  ASSERT_TRUE(fs_->ReadInto(ino, 1000, data.size(), &stored).ok());
  fs_->Forget(ino, 1);
  ASSERT_TRUE(fs_->Unlink(1, "f").ok());
  // Written and deleted over and over: every segment is reused.
  for (int i = 0; i < 16; ++i) {
    const std::string name = "other" + std::to_string(i);
    const uint64_t other = MakeFile(name, Random(4 << 20, 8 + i));
    ASSERT_NE(other, 0u);
    fs_->Forget(other, 1);
    ASSERT_TRUE(fs_->Unlink(1, name).ok());
    ASSERT_TRUE(fs_->Sync().ok());
  }
  for (const ReadView* view : {&buffered, &stored}) {
    std::string got(view->size(), '\0');
    view->CopyTo(got.data());
    EXPECT_TRUE(got == data.substr(1000)) << "a lent read changed under its holder";
  }
}

TEST_F(FileSystemTest, XattrsFollowCreateReplaceFlags) {
  Format(64 << 20);
  Mount();
  uint64_t ino = MakeFile("f", "x");
  ASSERT_TRUE(fs_->SetXattr(ino, "user.a", "1", 0).ok());
  EXPECT_EQ(fs_->SetXattr(ino, "user.a", "2", XATTR_CREATE).code(), Status::Code::kExists);
  EXPECT_EQ(fs_->SetXattr(ino, "user.b", "2", XATTR_REPLACE).code(), Status::Code::kNoData);
  ASSERT_TRUE(fs_->SetXattr(ino, "user.b", std::string("\0bin", 4), 0).ok());
  Remount();
  EXPECT_EQ(*fs_->GetXattr(ino, "user.a"), "1");
  EXPECT_EQ(*fs_->GetXattr(ino, "user.b"), std::string("\0bin", 4));
  EXPECT_EQ(*fs_->ListXattr(ino), std::string("user.a\0user.b\0", 14));
  ASSERT_TRUE(fs_->RemoveXattr(ino, "user.a").ok());
  EXPECT_EQ(fs_->GetXattr(ino, "user.a").status().code(), Status::Code::kNoData);
}

TEST_F(FileSystemTest, SecondOpenOfAMountedStoreIsRefused) {
  Format(64 << 20);
  Mount();
  auto second = FileSystem::Open(store_, MountOptions{});
  EXPECT_EQ(second.status().code(), Status::Code::kBusy) << second.status().ToString();
}

TEST_F(FileSystemTest, ForeignFileIsRefusedAndUntouched) {
  std::string garbage = Random(8 << 20, 5);
  {
    FILE* f = fopen(store_.c_str(), "wb");
    fwrite(garbage.data(), 1, garbage.size(), f);
    fclose(f);
  }
  auto r = FileSystem::Open(store_, MountOptions{});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a ckptfs store"), std::string::npos)
      << r.status().ToString();
  std::string after(garbage.size(), '\0');
  FILE* f = fopen(store_.c_str(), "rb");
  ASSERT_EQ(fread(after.data(), 1, after.size(), f), after.size());
  fclose(f);
  EXPECT_EQ(after, garbage);
}

TEST_F(FileSystemTest, FormatRefusesToOverwriteAStoreWithoutForce) {
  Format(64 << 20);
  FormatOptions f;
  f.segment_size = 2 << 20;
  EXPECT_EQ(FileSystem::Format(store_, f).code(), Status::Code::kExists);
  f.force = true;
  EXPECT_TRUE(FileSystem::Format(store_, f).ok());
}

}  // namespace
}  // namespace ckptfs
