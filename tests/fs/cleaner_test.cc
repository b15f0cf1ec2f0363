// Segment cleaning: with every segment half dead and none free, writes must
// still succeed until live data really fills the store, and the data moved
// by the cleaner must read back unchanged, before and after a remount.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <random>

#include "check/store_checker.h"
#include "ckptfs/filesystem.h"
#include "io/block_device.h"
#include "clean/cleaning_policy.h"

namespace ckptfs {
namespace {

TEST(CleaningPolicy, PrefersEmptierAndColderSegments) {
  const uint64_t seg = 100;
  std::vector<SegmentSummary> c = {{0, 90, 10, false}, {1, 20, 10, false}, {2, 20, 50, false}, {3, 95, 100, false}, {4, 60, 10, false}};
  auto v = PickVictims(c, seg, 3);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], 2u);  // as empty as 1 but colder
  EXPECT_EQ(v[1], 1u);  // emptier than 4 at the same age
  EXPECT_EQ(v[2], 4u);
  EXPECT_EQ(std::count(v.begin(), v.end(), 3u), 0);  // 95% live: never worth it
}

TEST(CleaningPolicy, RefusesSetsThatCannotFreeAWholeSegment) {
  std::vector<SegmentSummary> c = {{0, 90, 10, false}, {1, 88, 10, false}, {2, 89, 10, false}};
  EXPECT_TRUE(PickVictims(c, 100, 2).empty());  // 12 + 11: under a quarter segment
  c.push_back({3, 30, 10, false});
  EXPECT_EQ(PickVictims(c, 100, 2).size(), 2u);
  // Room for 100 live bytes: {3} fits, {1} (88) does not; 70 dead is enough.
  auto v = PickVictims(c, 100, 2, 100);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], 3u);
  // Room for 20: nothing fits.
  EXPECT_TRUE(PickVictims(c, 100, 2, 20).empty());
}

class CleanerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / "ckptfs-cleaner-XXXXXX";
    ASSERT_NE(mkdtemp(dir_.data()), nullptr);
    store_ = dir_ + "/store.img";
    FormatOptions f;
    f.size = 80 << 20;
    f.segment_size = 2 << 20;
    ASSERT_TRUE(FileSystem::Format(store_, f).ok());
    options_.memory_budget = 8 << 20;
    options_.clean_rate_bytes = 0;
    Mount();
  }
  void TearDown() override {
    fs_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Mount() {
    auto r = FileSystem::Open(store_, options_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    fs_ = std::move(r).value();
    fs_->Start();
  }
  // Writes `data` to a new file; false once the store is full.
  bool Put(const std::string& name, const std::string& data) {
    auto st = fs_->Create(1, name, 0644, 0, 0);
    if (!st.ok()) return false;
    auto w = fs_->Write(st->st_ino, 0, data.data(), data.size());
    if (w.ok()) w = fs_->Sync().ok() ? w : Result<size_t>(Status::NoSpace("sync"));
    if (!w.ok()) {
      EXPECT_TRUE(w.status().IsNoSpace()) << w.status().ToString();
      fs_->Forget(st->st_ino, 1);
      EXPECT_TRUE(fs_->Unlink(1, name).ok());
      return false;
    }
    fs_->Forget(st->st_ino, 1);
    return true;
  }
  std::string Get(const std::string& name) {
    auto st = fs_->Lookup(1, name);
    if (!st.ok()) return "<missing>";
    fs_->Forget(st->st_ino, 1);
    std::string out(static_cast<size_t>(st->st_size), '\0');
    auto r = fs_->Read(st->st_ino, 0, out.size(), out.data());
    if (!r.ok()) return "<" + r.status().ToString() + ">";
    return out;
  }
  // Closes the store, runs the checker over it, and mounts it again.
  void UnmountCheckAndRemount() {
    ASSERT_TRUE(fs_->Close().ok());
    fs_.reset();
    DeviceOptions o;
    o.read_only = true;
    o.use_uring = false;
    auto device = OpenDevice(store_, o);
    ASSERT_TRUE(device.ok());
    auto report = CheckStore(device->get());
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->clean()) << (report->errors.empty() ? "" : report->errors[0]);
    device->reset();
    Mount();
  }
  static std::string Random(size_t n, std::mt19937_64& gen) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(gen());
    return s;
  }

  std::string dir_, store_;
  MountOptions options_;
  std::unique_ptr<FileSystem> fs_;
};

TEST_F(CleanerTest, FragmentedFullStoreTakesMoreWritesAndMovesDataIntact) {
  std::mt19937_64 gen(42);
  std::map<std::string, std::string> files;
  // Fill with small files: every segment ends up holding many of them.
  for (int i = 0;; ++i) {
    std::string name = "a" + std::to_string(i);
    std::string data = Random(64 << 10, gen);
    if (!Put(name, data)) break;
    files[name] = data;
  }
  const size_t filled = files.size();
  ASSERT_GT(filled, 500u);
  // Delete a random half: every segment is now about half dead, none free.
  for (auto it = files.begin(); it != files.end();) {
    if (gen() % 2) {
      ASSERT_TRUE(fs_->Unlink(1, it->first).ok());
      it = files.erase(it);
    } else {
      ++it;
    }
  }
  ASSERT_TRUE(fs_->Sync().ok());
  // More writes: they only fit if the cleaner reclaims the dead halves.
  size_t added = 0;
  for (int i = 0;; ++i) {
    std::string name = "b" + std::to_string(i);
    std::string data = Random(64 << 10, gen);
    if (!Put(name, data)) break;
    files[name] = data;
    ++added;
  }
  StoreStats stats = fs_->Stats();
  std::printf("cleaner: %zu files filled the store, %zu deleted, %zu more written; "
              "%llu segments cleaned, %llu bytes moved\n",
              filled, filled - (files.size() - added), added,
              static_cast<unsigned long long>(stats.cleaner_segments),
              static_cast<unsigned long long>(stats.cleaner_bytes_moved));
  EXPECT_GT(stats.cleaner_bytes_moved, 0u);
  // Nearly all the freed half must have become usable again.
  EXPECT_GT(added * 10, (filled - (files.size() - added)) * 8);

  for (const auto& [name, data] : files) ASSERT_EQ(Get(name), data) << name;
  ASSERT_NO_FATAL_FAILURE(UnmountCheckAndRemount());
  for (const auto& [name, data] : files) ASSERT_EQ(Get(name), data) << name;
}

// Copies made with copy_file_range share their source's runs. Cleaning
// moves each shared run once and re-points every file at the one copy, so
// a copy stays free after its segments are cleaned; deleting either side
// leaves the other whole.
TEST_F(CleanerTest, SharedRunsStaySharedThroughCleaning) {
  std::mt19937_64 gen(7);
  std::map<std::string, std::string> files;
  std::set<std::string> pairs;  // originals whose copy "c"+name exists
  const auto copy_of = [&](const std::string& name) -> bool {
    auto src = fs_->Lookup(1, name);
    auto dst = fs_->Create(1, "c" + name, 0644, 0, 0);
    if (!src.ok() || !dst.ok()) return false;
    auto n = fs_->CopyRange(src->st_ino, 0, dst->st_ino, 0, 64 << 10);
    fs_->Forget(src->st_ino, 1);
    fs_->Forget(dst->st_ino, 1);
    return n.ok() && *n == (64u << 10);
  };
  for (int i = 0;; ++i) {
    std::string name = "a" + std::to_string(i);
    std::string data = Random(64 << 10, gen);
    if (!Put(name, data)) break;
    files[name] = data;
    if (i % 3 == 0) {
      ASSERT_TRUE(copy_of(name));
      files["c" + name] = data;
      pairs.insert(name);
    }
  }
  ASSERT_GT(pairs.size(), 100u);
  EXPECT_EQ(fs_->Stats().shared_bytes, pairs.size() * (64 << 10));
  // Delete a random half (originals and copies alike).
  for (auto it = files.begin(); it != files.end();) {
    if (gen() % 2) {
      ASSERT_TRUE(fs_->Unlink(1, it->first).ok());
      const std::string original = it->first[0] == 'c' ? it->first.substr(1) : it->first;
      pairs.erase(original);
      it = files.erase(it);
    } else {
      ++it;
    }
  }
  ASSERT_TRUE(fs_->Sync().ok());
  const uint64_t moved_before = fs_->Stats().cleaner_bytes_moved;
  for (int i = 0;; ++i) {
    std::string name = "b" + std::to_string(i);
    std::string data = Random(64 << 10, gen);
    if (!Put(name, data)) break;
    files[name] = data;
  }
  const StoreStats stats = fs_->Stats();
  EXPECT_GT(stats.cleaner_bytes_moved, moved_before);
  EXPECT_EQ(stats.shared_bytes, pairs.size() * (64 << 10));
  for (const auto& [name, data] : files) ASSERT_EQ(Get(name), data) << name;
  ASSERT_NO_FATAL_FAILURE(UnmountCheckAndRemount());
  EXPECT_EQ(fs_->Stats().shared_bytes, pairs.size() * (64 << 10));
  for (const auto& [name, data] : files) ASSERT_EQ(Get(name), data) << name;
}

TEST_F(CleanerTest, WritesInterleavedWithOverwritesNeverLoseTheNewerBytes) {
  // Overwrite files while space is tight, so cleaner moves race user writes.
  std::mt19937_64 gen(7);
  std::map<std::string, std::string> files;
  for (int i = 0; i < 300; ++i) {
    std::string name = "f" + std::to_string(i);
    files[name] = Random(128 << 10, gen);
    ASSERT_TRUE(Put(name, files[name])) << i;
  }
  for (int round = 0; round < 1500; ++round) {
    std::string name = "f" + std::to_string(gen() % 300);
    auto st = fs_->Lookup(1, name);
    ASSERT_TRUE(st.ok());
    size_t off = gen() % files[name].size();
    std::string patch = Random(std::min<size_t>(files[name].size() - off, 1 + gen() % (64 << 10)), gen);
    auto w = fs_->Write(st->st_ino, off, patch.data(), patch.size());
    fs_->Forget(st->st_ino, 1);
    ASSERT_TRUE(w.ok()) << w.status().ToString() << " at round " << round;
    files[name].replace(off, patch.size(), patch);
    if (round % 50 == 0) {
      ASSERT_TRUE(fs_->Sync().ok());
    }
  }
  EXPECT_GT(fs_->Stats().cleaner_segments, 0u);
  for (const auto& [name, data] : files) ASSERT_EQ(Get(name), data) << name;
  ASSERT_TRUE(fs_->Close().ok());
  fs_.reset();
  Mount();
  for (const auto& [name, data] : files) ASSERT_EQ(Get(name), data) << name;
}

}  // namespace
}  // namespace ckptfs
