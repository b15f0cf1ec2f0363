// The core with compression on, over a real backing file: what compressed
// files read back as (whole, at random offsets, before and after their runs
// are placed, across remounts), how a directory's policy is inherited, that
// space is accounted physically, that the cleaner moves compressed runs
// intact, that a full store still says ENOSPC, and that fsck decodes every
// compressed run and catches a damaged one.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/xattr.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <thread>

#include "check/store_checker.h"
#include "ckptfs/filesystem.h"
#include "io/block_device.h"
#include "store_image.h"
#include "tensor_data.h"

namespace ckptfs {
namespace {

constexpr const char* kPolicyXattr = "user.ckptfs.compress";

using ::ckptfs::testing::Bf16Like;

std::string Random(size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(gen());
  return s;
}

class CompressedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ckptfs-compressed-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store_ = dir_ + "/store.img";
  }
  void TearDown() override {
    fs_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Format(uint64_t size, uint64_t segment_size = 2 << 20) {
    FormatOptions f;
    f.size = size;
    f.segment_size = segment_size;
    Status s = FileSystem::Format(store_, f);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Mount(const std::string& compress = "zstd:3") { MountWith(compress, 2); }
  void MountWith(const std::string& compress, unsigned compressors, bool when_idle = false) {
    MountOptions m;
    m.memory_budget = 16 << 20;
    m.compress = compress;
    m.compressor_threads = compressors;
    m.compress_when_idle = when_idle;
    m.clean_rate_bytes = 0;
    auto r = FileSystem::Open(store_, m);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    fs_ = std::move(r).value();
    fs_->Start();
  }
  void Remount(const std::string& compress = "zstd:3") {
    ASSERT_TRUE(fs_->Close().ok());
    fs_.reset();
    Mount(compress);
  }
  uint64_t Ino(std::string_view name, uint64_t parent = 1) {
    auto st = fs_->Lookup(parent, name);
    EXPECT_TRUE(st.ok()) << name << ": " << st.status().ToString();
    return st.ok() ? st->st_ino : 0;
  }
  // Written in `piece`-sized calls, as FUSE delivers them.
  uint64_t MakeFile(std::string_view name, const std::string& content, uint64_t parent = 1,
                    size_t piece = 1 << 20) {
    auto st = fs_->Create(parent, name, 0644, 0, 0);
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    if (!st.ok()) return 0;
    for (size_t off = 0; off < content.size(); off += piece) {
      const size_t n = std::min(piece, content.size() - off);
      auto w = fs_->Write(st->st_ino, off, content.data() + off, n);
      EXPECT_TRUE(w.ok()) << w.status().ToString();
      if (!w.ok()) break;
    }
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
  // Reads at random offsets and lengths, each compared with `expect`.
  void ExpectRandomReads(uint64_t ino, const std::string& expect, uint64_t seed, int count = 200) {
    std::mt19937_64 gen(seed);
    for (int i = 0; i < count; ++i) {
      const uint64_t off = gen() % expect.size();
      const size_t len = 1 + gen() % std::min<size_t>(expect.size() - off, 3 << 20);
      std::string got(len, '\0');
      auto r = fs_->Read(ino, off, len, got.data());
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_EQ(*r, len);
      ASSERT_EQ(got, expect.substr(off, len)) << "read of " << len << " at " << off;
    }
  }
  // Unmounts, runs fsck's checker and expects a clean store.
  Result<CheckReport> CloseAndCheck() {
    Status closed = fs_->Close();
    fs_.reset();
    if (!closed.ok()) return closed;
    auto report = Check();
    if (report.ok()) {
      EXPECT_TRUE(report->clean()) << (report->errors.empty() ? "" : report->errors[0]);
    }
    return report;
  }
  Result<CheckReport> Check() {
    DeviceOptions o;
    o.read_only = true;
    o.use_uring = false;
    auto device = OpenDevice(store_, o);
    if (!device.ok()) return device.status();
    return CheckStore(device->get());
  }

  std::string dir_, store_;
  std::unique_ptr<FileSystem> fs_;
};

TEST_F(CompressedStoreTest, FilesReadBackWholeAndAtRandomOffsetsBeforeAndAfterPlacement) {
  Format(128 << 20);
  Mount();
  // Odd sizes and pieces that are not a multiple of anything.
  const std::string a = Bf16Like(5 * (1 << 20) + 12345, 1);
  const std::string b = Bf16Like(777777, 2);
  const uint64_t ia = MakeFile("a", a);
  const uint64_t ib = MakeFile("b", b, 1, 65536 + 3);
  // Straight away: some runs are still waiting for a compressor.
  ExpectRandomReads(ia, a, 10, 50);
  EXPECT_EQ(ReadAll(ib), b);
  ASSERT_TRUE(fs_->Sync().ok());
  ExpectRandomReads(ia, a, 11);
  ExpectRandomReads(ib, b, 12);
  StoreStats s = fs_->Stats();
  EXPECT_GT(s.compressed_runs, 0u);
  EXPECT_LT(s.live_bytes, s.live_file_bytes);
  Remount();
  EXPECT_EQ(ReadAll(Ino("a")), a);
  ExpectRandomReads(Ino("a"), a, 13);
  ExpectRandomReads(Ino("b"), b, 14);
  auto report = CloseAndCheck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_GT(report->compressed_runs, 0u);
}

TEST_F(CompressedStoreTest, OverwriteTruncateAndUnlinkBeforePlacementLeaveTheLatestState) {
  Format(128 << 20);
  Mount();
  std::string a = Bf16Like(4 << 20, 3);
  const uint64_t ia = MakeFile("a", a);
  // Overwrite the middle, cut the tail and grow again, all before the runs
  // are necessarily placed: the log must replay to exactly this state.
  const std::string patch = Bf16Like(300000, 4);
  ASSERT_TRUE(fs_->Write(ia, 1000001, patch.data(), patch.size()).ok());
  a.replace(1000001, patch.size(), patch);
  AttrChange shrink;
  shrink.set_size = true;
  shrink.size = 3 << 20;
  ASSERT_TRUE(fs_->SetAttr(ia, shrink).ok());
  a.resize(3 << 20);
  AttrChange grow = shrink;
  grow.size = (3 << 20) + 5000;
  ASSERT_TRUE(fs_->SetAttr(ia, grow).ok());
  a.resize(grow.size, '\0');
  const uint64_t gone = MakeFile("gone", Bf16Like(2 << 20, 5));
  fs_->Forget(gone, 1);
  ASSERT_TRUE(fs_->Unlink(1, "gone").ok());
  EXPECT_EQ(ReadAll(ia), a);
  Remount();
  EXPECT_EQ(ReadAll(Ino("a")), a);
  EXPECT_FALSE(fs_->Lookup(1, "gone").ok());
  auto report = CloseAndCheck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
}

TEST_F(CompressedStoreTest, IncompressibleDataIsStoredRaw) {
  Format(64 << 20);
  Mount();
  const std::string r = Random(3 << 20, 6);
  const uint64_t ino = MakeFile("random", r);
  ASSERT_TRUE(fs_->Sync().ok());
  StoreStats s = fs_->Stats();
  EXPECT_EQ(s.compressed_runs, 0u);
  EXPECT_EQ(s.compress_raw_runs, 3u);
  EXPECT_EQ(s.compress_bytes_out, s.compress_bytes_in);
  EXPECT_EQ(ReadAll(ino), r);
}

TEST_F(CompressedStoreTest, SpaceIsAccountedPhysicallyAndDuSeesIt) {
  Format(128 << 20);
  Mount();
  const std::string w = Bf16Like(8 << 20, 7);
  const uint64_t ino = MakeFile("w", w);
  ASSERT_TRUE(fs_->Sync().ok());
  auto st = fs_->GetAttr(ino);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(static_cast<size_t>(st->st_size), w.size());
  // Allocated bytes (du) are what the device holds, well below the size.
  EXPECT_LT(static_cast<uint64_t>(st->st_blocks) * 512, w.size() * 9 / 10);
  StoreStats s = fs_->Stats();
  EXPECT_EQ(s.live_file_bytes, w.size());
  EXPECT_EQ(s.compress_bytes_in, w.size());
  EXPECT_LT(s.live_bytes, w.size() * 9 / 10);
  // statfs counts stored bytes: far less than 8 MiB went.
  struct statvfs sv = fs_->StatFs();
  const uint64_t used = (sv.f_blocks - sv.f_bfree) * sv.f_frsize;
  EXPECT_LT(used, w.size());
}

TEST_F(CompressedStoreTest, DirectoryPolicyIsValidatedAndInherited) {
  Format(128 << 20);
  Mount("none");
  auto dir = fs_->Mkdir(1, "ckpt", 0755, 0, 0);
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(fs_->SetXattr(dir->st_ino, kPolicyXattr, "lz4", 0).code() == Status::Code::kInvalid);
  EXPECT_TRUE(fs_->SetXattr(dir->st_ino, kPolicyXattr, "zstd:99", 0).code() == Status::Code::kInvalid);
  ASSERT_TRUE(fs_->SetXattr(dir->st_ino, kPolicyXattr, "zstd:1:group2", 0).ok());
  auto sub = fs_->Mkdir(dir->st_ino, "step1", 0755, 0, 0);
  ASSERT_TRUE(sub.ok());
  auto inherited = fs_->GetXattr(sub->st_ino, kPolicyXattr);
  ASSERT_TRUE(inherited.ok());
  EXPECT_EQ(*inherited, "zstd:1:group2");
  const std::string w = Bf16Like(2 << 20, 8);
  const uint64_t in_dir = MakeFile("w", w, sub->st_ino);
  const uint64_t outside = MakeFile("w", w);  // the mount says none
  ASSERT_TRUE(fs_->Sync().ok());
  StoreStats s = fs_->Stats();
  EXPECT_EQ(s.compress_bytes_in, w.size()) << "only the file under ckpt/ compresses";
  EXPECT_GT(s.compressed_runs, 0u);
  EXPECT_EQ(ReadAll(in_dir), w);
  EXPECT_EQ(ReadAll(outside), w);
  // A directory can opt out on a compressing mount.
  Remount("zstd:3");
  auto raw_dir = fs_->Mkdir(1, "raw", 0755, 0, 0);
  ASSERT_TRUE(raw_dir.ok());
  ASSERT_TRUE(fs_->SetXattr(raw_dir->st_ino, kPolicyXattr, "none", 0).ok());
  MakeFile("w", w, raw_dir->st_ino);
  ASSERT_TRUE(fs_->Sync().ok());
  EXPECT_EQ(fs_->Stats().compress_bytes_in, 0u);
  Remount("none");
  EXPECT_EQ(ReadAll(Ino("w", Ino("step1", Ino("ckpt")))), w);
}

TEST_F(CompressedStoreTest, CleanerMovesCompressedRunsIntact) {
  Format(40 << 20);  // 19 segments of 2 MiB
  Mount("zstd:1");
  std::map<std::string, std::string> kept;
  // Files of two lifetimes interleaved in the same segments: deleting the
  // short-lived ones leaves every segment partly dead, so room for later
  // writes has to come from cleaning, which moves the compressed runs.
  for (int i = 0; i < 60; ++i) {
    const std::string name = "f" + std::to_string(i);
    const std::string data = Bf16Like((1 << 20) + 4096 * (i % 7), 100 + i);
    const uint64_t ino = MakeFile(name, data);
    ASSERT_NE(ino, 0u);
    fs_->Forget(ino, 1);  // the kernel's reference from create
    if (i % 4 == 0) kept[name] = data;
    if (i >= 2) {
      const std::string old = "f" + std::to_string(i - 2);
      if (!kept.count(old)) ASSERT_TRUE(fs_->Unlink(1, old).ok());
    }
    ASSERT_TRUE(fs_->Sync().ok());
  }
  StoreStats s = fs_->Stats();
  EXPECT_GT(s.cleaner_segments, 0u) << "the test must make the cleaner run";
  for (const auto& [name, data] : kept) ASSERT_EQ(ReadAll(Ino(name)), data) << name;
  Remount("zstd:1");
  for (const auto& [name, data] : kept) ASSERT_EQ(ReadAll(Ino(name)), data) << name;
  auto report = CloseAndCheck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
}

TEST_F(CompressedStoreTest, FullStoreSaysNoSpaceAndKeepsOtherFiles) {
  Format(32 << 20);
  Mount();
  const uint64_t keep = MakeFile("keep", Bf16Like(1 << 20, 9));
  ASSERT_TRUE(fs_->Sync().ok());
  auto st = fs_->Create(1, "filler", 0644, 0, 0);
  ASSERT_TRUE(st.ok());
  Status last;
  const std::string chunk = Random(1 << 20, 10);
  for (uint64_t off = 0; off < (64ull << 20); off += chunk.size()) {
    auto w = fs_->Write(st->st_ino, off, chunk.data(), chunk.size());
    if (!w.ok()) {
      last = w.status();
      break;
    }
  }
  if (last.ok()) last = fs_->Sync();
  ASSERT_TRUE(last.IsNoSpace()) << last.ToString();
  EXPECT_EQ(ReadAll(keep), Bf16Like(1 << 20, 9));
  fs_->Forget(st->st_ino, 1);
  ASSERT_TRUE(fs_->Unlink(1, "filler").ok());
  const uint64_t again = MakeFile("again", Bf16Like(3 << 20, 11));
  { Status sy = fs_->Sync(); ASSERT_TRUE(sy.ok()) << sy.ToString(); }
  EXPECT_EQ(ReadAll(again), Bf16Like(3 << 20, 11));
  Remount();
  EXPECT_EQ(ReadAll(Ino("keep")), Bf16Like(1 << 20, 9));
  EXPECT_EQ(ReadAll(Ino("again")), Bf16Like(3 << 20, 11));
}

// Space is promised to a write when it is queued for a compressor: a raw
// writer filling the store cannot take it, so the acknowledged overwrite is
// placed, logged and survives a remount (it must never fall back to the
// old bytes, nor point into a segment reused since).
TEST_F(CompressedStoreTest, AQueuedWriteKeepsItsRoomWhenAnotherWriterFillsTheStore) {
  Format(32 << 20);
  MountWith("zstd:19:none", 1);
  const uint64_t a = MakeFile("a", Random(2 << 20, 1), 1);
  ASSERT_TRUE(fs_->SetXattr(a, kPolicyXattr, "none", 0).ok());
  ASSERT_TRUE(fs_->Sync().ok());
  ASSERT_TRUE(fs_->SetXattr(a, kPolicyXattr, "zstd:19:none", 0).ok());
  const std::string new_a = Bf16Like(4 << 20, 2);
  for (size_t off = 0; off < new_a.size(); off += 1 << 20) {
    ASSERT_TRUE(fs_->Write(a, off, new_a.data() + off, 1 << 20).ok());
  }
  auto b = fs_->Create(1, "b", 0644, 0, 0);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(fs_->SetXattr(b->st_ino, kPolicyXattr, "none", 0).ok());
  const std::string chunk = Random(1 << 20, 3);
  Status full;
  for (uint64_t off = 0; full.ok(); off += chunk.size()) {
    full = fs_->Write(b->st_ino, off, chunk.data(), chunk.size()).status();
  }
  EXPECT_TRUE(full.IsNoSpace()) << full.ToString();
  ASSERT_TRUE(fs_->Sync().ok());
  EXPECT_EQ(ReadAll(a), new_a);
  // Make room and write again, into whatever segments were freed.
  AttrChange empty;
  empty.set_size = true;
  empty.size = 0;
  ASSERT_TRUE(fs_->SetAttr(b->st_ino, empty).ok());
  ASSERT_TRUE(fs_->Sync().ok());
  for (uint64_t off = 0; off < (12ull << 20); off += chunk.size()) {
    ASSERT_TRUE(fs_->Write(b->st_ino, off, chunk.data(), chunk.size()).ok());
  }
  ASSERT_TRUE(fs_->Close().ok());
  fs_.reset();
  MountWith("zstd:19:none", 1);
  EXPECT_EQ(ReadAll(Ino("a")), new_a);
}

// A write waiting for a compressor must not keep a deletion after it from
// freeing space: a raw writer needing that space waits for the compressor
// instead of failing.
TEST_F(CompressedStoreTest, DeletedSpaceIsReusableWhileACompressedWriteIsQueued) {
  Format(64 << 20);
  MountWith("none", 1);
  const std::string chunk = Random(1 << 20, 3);
  const uint64_t d = MakeFile("d", std::string(40 << 20, 'd'));
  fs_->Forget(d, 1);
  ASSERT_TRUE(fs_->Sync().ok());
  auto a = fs_->Create(1, "a", 0644, 0, 0);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(fs_->SetXattr(a->st_ino, kPolicyXattr, "zstd:19:none", 0).ok());
  const std::string adata = Bf16Like(4 << 20, 1);
  for (size_t off = 0; off < adata.size(); off += 1 << 20) {
    ASSERT_TRUE(fs_->Write(a->st_ino, off, adata.data() + off, 1 << 20).ok());
  }
  ASSERT_TRUE(fs_->Unlink(1, "d").ok());
  auto b = fs_->Create(1, "b", 0644, 0, 0);
  ASSERT_TRUE(b.ok());
  for (uint64_t off = 0; off < (40ull << 20); off += chunk.size()) {
    auto w = fs_->Write(b->st_ino, off, chunk.data(), chunk.size());
    ASSERT_TRUE(w.ok()) << "at " << (off >> 20) << " MiB: " << w.status().ToString();
  }
  ASSERT_TRUE(fs_->Sync().ok());
  EXPECT_EQ(ReadAll(a->st_ino), adata);
}

// Overwriting most of every compressed run leaves runs that are mostly dead:
// the cleaner moves their live pieces out decoded rather than copying the
// dead bytes along, so the space comes back without churning.
TEST_F(CompressedStoreTest, MostlyDeadCompressedRunsAreReclaimed) {
  Format(64 << 20);
  MountWith("zstd:3", 2);
  std::string c = Bf16Like(40 << 20, 1);
  const uint64_t ino = MakeFile("c", c);
  ASSERT_TRUE(fs_->Sync().ok());
  ASSERT_TRUE(fs_->SetXattr(ino, kPolicyXattr, "none", 0).ok());
  const std::string over = Random(960 << 10, 2);
  for (size_t off = 0; off < c.size(); off += 1 << 20) {
    auto w = fs_->Write(ino, off, over.data(), over.size());
    ASSERT_TRUE(w.ok()) << "at " << (off >> 20) << " MiB: " << w.status().ToString();
    c.replace(off, over.size(), over);
  }
  ASSERT_TRUE(fs_->Sync().ok());
  const StoreStats s = fs_->Stats();
  // 40 MiB compressed plus 37.5 MiB raw were written: the cleaner may move
  // some of it, but not gigabytes.
  EXPECT_LT(s.cleaner_bytes_moved, 64ull << 20) << s.cleaner_segments << " segments cleaned";
  EXPECT_EQ(ReadAll(ino), c);
  Remount("zstd:3");
  EXPECT_EQ(ReadAll(Ino("c")), c);
}

// compress_when=idle: the burst is stored raw, and once writes stop the
// cleaner rewrites it compressed; data that does not compress is moved at
// most once, not retried for ever.
TEST_F(CompressedStoreTest, IdleRecompressionShrinksRawDataLater) {
  Format(256 << 20);
  MountWith("zstd:1", 2, /*when_idle=*/true);
  const std::string w = Bf16Like(24 << 20, 21);
  const std::string noise = Random(8 << 20, 22);
  const uint64_t iw = MakeFile("w", w);
  const uint64_t in = MakeFile("noise", noise);
  // Looked at before the Sync: the idle pass may start 1 s after the last
  // write, and a Sync under a sanitizer on a loaded machine can take that.
  StoreStats s = fs_->Stats();
  EXPECT_EQ(s.compressed_runs, 0u) << "written raw";
  EXPECT_EQ(s.live_bytes, s.live_file_bytes);
  ASSERT_TRUE(fs_->Sync().ok());
  // Idle now: within a few seconds the raw runs are rewritten compressed
  // (the bound is for a sanitizer's build on a loaded machine). Each look
  // is one snapshot: mid-pass, a run being moved counts twice until the
  // commit frees its old copy, so the savings may show and then hide again.
  auto saving = [&] {
    const StoreStats now = fs_->Stats();
    return now.live_bytes * 10 < now.live_file_bytes * 9;
  };
  for (int i = 0; i < 600 && !saving(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // The pass is let finish, up to a bound: then the savings are the
  // store's, not a snapshot's.
  uint64_t moved = fs_->Stats().cleaner_bytes_moved;
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const uint64_t now = fs_->Stats().cleaner_bytes_moved;
    if (now == moved) break;
    moved = now;
  }
  s = fs_->Stats();
  EXPECT_LT(s.live_bytes * 10, s.live_file_bytes * 9)
      << s.live_bytes << " stored for " << s.live_file_bytes;
  EXPECT_GT(s.compressed_runs, 0u);
  ExpectRandomReads(iw, w, 23);
  EXPECT_EQ(ReadAll(in), noise);
  // Nothing left to gain: the cleaner stops rather than moving the noise
  // again and again (a pass every 100 ms tick if it did not).
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  EXPECT_EQ(fs_->Stats().cleaner_bytes_moved, moved);
  auto report = CloseAndCheck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_GT(report->compressed_runs, 0u);
  Mount("none");
  EXPECT_EQ(ReadAll(Ino("w")), w);
  EXPECT_EQ(ReadAll(Ino("noise")), noise);
}

// A raw burst that leaves the store nearly full has nothing dead for the
// cleaner to reclaim; idle, compressing it is what gives space back.
TEST_F(CompressedStoreTest, IdleRecompressionFreesANearlyFullStore) {
  // 8 MiB segments: with 2 MiB ones the tail a compressed run leaves is a
  // third of a segment, which the cleaner would count as dead and chase.
  Format(128 << 20, 8 << 20);
  MountWith("zstd:1", 2, /*when_idle=*/true);
  // Fill until writes fail: raw, since nothing compresses while writing.
  auto st = fs_->Create(1, "w", 0644, 0, 0);
  ASSERT_TRUE(st.ok());
  std::string written;
  for (uint64_t i = 0;; ++i) {
    const std::string chunk = Bf16Like(1 << 20, 100 + i);
    if (!fs_->Write(st->st_ino, written.size(), chunk.data(), chunk.size()).ok()) break;
    written += chunk;
  }
  ASSERT_TRUE(fs_->Sync().ok());
  ASSERT_GT(written.size(), 64u << 20);
  const struct statvfs full = fs_->StatFs();
  // At least one whole 8 MiB segment back. How much more depends on where
  // the burst's runs landed: the plain build frees 16 MiB; under
  // ThreadSanitizer 15.3 MiB on one machine and 8.7 MiB in four runs of
  // five on another, where every segment left with raw data then holds
  // less raw than live bytes and is no candidate (RecompressOnce), which a
  // log of its candidates showed. The behaviour is that an idle store with
  // nothing dead gives whole segments back.
  const uint64_t wanted = full.f_bfree + (8 << 20) / full.f_frsize;
  // Each recompression pass takes a free segment for what it writes before
  // its commit frees the victims, so free space dips between passes: it is
  // read once it has stayed above the mark for a second (under load a pass
  // can start after the mark was first seen, and a single look caught a dip).
  uint64_t free_blocks = 0;
  for (int i = 0, above = 0; i < 600 && above < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    free_blocks = fs_->StatFs().f_bfree;
    above = free_blocks >= wanted ? above + 1 : 0;
  }
  EXPECT_GE(free_blocks, wanted) << "free blocks " << full.f_bfree << " -> " << free_blocks;
  EXPECT_EQ(ReadAll(st->st_ino), written);
  Remount("none");
  EXPECT_EQ(ReadAll(Ino("w")), written);
}

TEST_F(CompressedStoreTest, FsckReportsADamagedCompressedRun) {
  Format(64 << 20);
  Mount();
  const std::string w = Bf16Like(2 << 20, 12);
  MakeFile("w", w);
  ASSERT_TRUE(fs_->Close().ok());
  fs_.reset();
  auto before = Check();
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(before->clean());
  ASSERT_EQ(before->compressed_runs, 2u);
  // A compressed run starts with a zstd frame's magic number, on a block
  // boundary; damage the first one found, inside its payload.
  std::string image;
  {
    std::ifstream in(store_, std::ios::binary);
    image.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string magic("\x28\xb5\x2f\xfd", 4);
  uint64_t run = 0;
  for (uint64_t off = 1 << 20; off + 4096 <= image.size() && !run; off += 4096) {
    if (image.compare(off, 4, magic) == 0) run = off;
  }
  ASSERT_NE(run, 0u) << "no compressed run found in the image";
  testing::FlipBit(store_, run + 2000);
  auto after = Check();
  ASSERT_TRUE(after.ok());
  ASSERT_FALSE(after->errors.empty());
  EXPECT_NE(after->errors[0].find("checksum mismatch"), std::string::npos) << after->errors[0];
  Mount();
  std::string got(w.size(), '\0');
  auto r = fs_->Read(Ino("w"), 0, got.size(), got.data());
  EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
}

}  // namespace
}  // namespace ckptfs
