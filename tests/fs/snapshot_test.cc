// A snapshot replayed into an empty namespace rebuilds the same state, and
// a store whose log was compacted remounts to the same tree.
#include "meta/snapshot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "ckptfs/filesystem.h"
#include "log/record.h"

namespace ckptfs {
namespace {

class CountingObserver : public SpaceObserver {
 public:
  void Referenced(const PhysicalExtent&, uint32_t, uint64_t bytes) override { live += bytes; }
  void Released(const PhysicalExtent&, uint32_t, uint64_t bytes) override { live -= bytes; }
  int64_t live = 0;
};

// Everything a snapshot must carry, as text.
std::string Describe(const Namespace& ns) {
  std::map<uint64_t, std::string> lines;
  for (const auto& [ino, n] : ns.inodes()) {
    std::ostringstream o;
    o << ino << " mode=" << n->mode << " uid=" << n->uid << " gid=" << n->gid << " nlink="
      << n->nlink << " size=" << n->size << " a=" << n->atime_ns << " m=" << n->mtime_ns
      << " c=" << n->ctime_ns << " parent=" << n->parent << " target=" << n->symlink_target;
    for (const auto& [name, v] : n->xattrs) o << " x:" << name << "=" << v;
    for (const auto& [cookie, name] : n->names_by_cookie) o << " e:" << name << "->" << n->entries.at(name).ino;
    for (const auto& [off, e] : n->extents.entries()) {
      o << " [" << off << "+" << e.length << "@" << e.phys.addr << "/" << e.skip << "]";
    }
    lines[ino] = o.str();
  }
  std::string out;
  for (const auto& [ino, line] : lines) out += line + "\n";
  return out + "next=" + std::to_string(ns.next_ino());
}

TEST(Snapshot, ReplayRebuildsTheSameNamespace) {
  CountingObserver live_space;
  Namespace live(&live_space);
  auto apply = [&](const Record& r) { ASSERT_TRUE(live.Apply(r).ok()); };
  apply(record::CreateInode{1, S_IFDIR | 0755, 0, 0, 0, 10, ""});
  apply(record::CreateInode{2, S_IFDIR | 0700, 5, 6, 0, 11, ""});
  apply(record::Link{1, "dir", 2, 12});
  apply(record::CreateInode{3, S_IFREG | 0644, 0, 0, 0, 13, ""});
  apply(record::Link{2, "file", 3, 14});
  apply(record::Link{1, "hardlink", 3, 15});
  apply(record::WriteExtent{3, 0, 8192, PhysicalExtent{1 << 20, 8192, 7}, 0, 16});
  apply(record::WriteExtent{3, 4096, 100, PhysicalExtent{2 << 20, 4096, 8}, 50, 17});
  apply(record::Truncate{3, 100000, 18});
  // fallocate: reserved space inside the file, around data, and past its end
  apply(record::Reserve{3, 4096, 20480});
  apply(record::Reserve{3, 200000, 8192});
  apply(record::SetXattr{3, "user.k", "v", 19});
  apply(record::CreateInode{4, S_IFLNK | 0777, 0, 0, 0, 20, "dir/file"});
  apply(record::Link{1, "sym", 4, 21});
  apply(record::CreateInode{5, S_IFREG | 0600, 0, 0, 0, 22, ""});  // open, unlinked
  apply(record::CreateInode{9, S_IFREG | 0600, 0, 0, 0, 23, ""});
  apply(record::Link{1, "gone", 9, 24});
  apply(record::Unlink{1, "gone", 25});
  apply(record::FreeInode{9});
  apply(record::SetAttr{2, record::SetAttr::kAtime | record::SetAttr::kMtime, 0, 0, 0, 1, 2, 3});

  std::string snapshot;
  EncodeSnapshot(live, &snapshot);
  CountingObserver replay_space;
  Namespace replayed(&replay_space);
  std::string_view in(snapshot);
  while (!in.empty()) {
    auto r = DecodeRecord(&in);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(replayed.Apply(*r).ok());
  }
  EXPECT_EQ(Describe(replayed), Describe(live));
  EXPECT_EQ(replay_space.live, live_space.live);
  EXPECT_EQ(replayed.next_ino(), 10u);  // inode 9 was freed but its number stays used
}

TEST(Snapshot, CompactedStoreRemountsToTheSameTree) {
  std::string dir = std::filesystem::temp_directory_path() / "ckptfs-snapshot-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::string store = dir + "/store.img";
  FormatOptions f;
  f.size = 256 << 20;
  f.segment_size = 2 << 20;
  ASSERT_TRUE(FileSystem::Format(store, f).ok());
  MountOptions m;
  m.compact_log_bytes = 64 << 10;  // compact early and often
  auto fs = FileSystem::Open(store, m);
  ASSERT_TRUE(fs.ok());
  (*fs)->Start();
  std::map<std::string, std::string> want;
  for (int i = 0; i < 400; ++i) {
    std::string name = "f" + std::to_string(i % 60);
    std::string data(1000 + i * 37, static_cast<char>('a' + i % 26));
    auto st = (*fs)->Lookup(1, name);
    uint64_t ino = st.ok() ? st->st_ino : (*fs)->Create(1, name, 0644, 0, 0)->st_ino;
    ASSERT_TRUE((*fs)->Write(ino, 0, data.data(), data.size()).ok());
    AttrChange c;
    c.set_size = true;
    c.size = data.size();
    ASSERT_TRUE((*fs)->SetAttr(ino, c).ok());
    want[name] = data;
    if (i % 7 == 0) ASSERT_TRUE((*fs)->Sync().ok());
  }
  EXPECT_GT((*fs)->Stats().log_compactions, 0u);
  ASSERT_TRUE((*fs)->Close().ok());
  fs->reset();

  auto again = FileSystem::Open(store, m);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  for (const auto& [name, data] : want) {
    auto st = (*again)->Lookup(1, name);
    ASSERT_TRUE(st.ok()) << name;
    std::string got(data.size(), '\0');
    ASSERT_EQ(*(*again)->Read(st->st_ino, 0, got.size(), got.data()), data.size());
    EXPECT_EQ(got, data) << name;
  }
  again->reset();
  std::filesystem::remove_all(dir);
}

TEST(Snapshot, LogGrowsOnAfterCompactionsWithoutLeakingSegments) {
  std::string dir = std::filesystem::temp_directory_path() / "ckptfs-review-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::string store = dir + "/store.img";
  FormatOptions f;
  f.size = 128 << 20;
  f.segment_size = 2 << 20;
  ASSERT_TRUE(FileSystem::Format(store, f).ok());
  MountOptions o;
  o.memory_budget = 8 << 20;
  o.compact_log_bytes = 6 << 20;
  o.commit_interval_ms = 100000;
  auto r = FileSystem::Open(store, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto fs = std::move(r).value();
  fs->Start();
  auto st = fs->Create(1, "f", 0644, 0, 0);
  ASSERT_TRUE(st.ok());
  std::string value(60 << 10, 'x');
  uint64_t max_meta = 0;
  for (int i = 0; i < 1500; ++i) {
    value[0] = static_cast<char>(i);
    ASSERT_TRUE(fs->SetXattr(st->st_ino, "user.big", value, 0).ok());
    ASSERT_TRUE(fs->Sync().ok());
    StoreStats s = fs->Stats();
    max_meta = std::max(max_meta, s.segments_meta);
  }
  // A 64 KiB snapshot plus <= 4x of log needs a handful of 2 MiB segments at most.
  EXPECT_LE(max_meta, 4u) << "metadata segments leak after compaction";
  EXPECT_GE(fs->Stats().log_compactions, 2u);
  ASSERT_TRUE(fs->Close().ok());
  fs.reset();
  auto again = FileSystem::Open(store, o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto got = (*again)->GetXattr(st->st_ino, "user.big");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, value);
  again->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ckptfs
