// A store opened read-only (MountOptions::read_only) over a device that
// fails the test on any Write, Flush or Provision, as the device of a
// drained image on another node refuses them: replay, every read, the
// refusal of every change (Status::ReadOnly), background threads, Sync and
// Close, with the device's bytes compared before and after. Also how
// read-only and read-write opens of one store file share its lock.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ckptfs/filesystem.h"
#include "io/fault_injection_device.h"
#include "io/memory_device.h"
#include "open_device.h"
#include "temp_dir.h"

namespace ckptfs {
namespace {

constexpr uint64_t kStoreSize = 64 << 20;
constexpr uint64_t kSegmentSize = 2 << 20;

std::string Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(gen());
  return s;
}

// Bytes that compress: a repeated 256-byte pattern.
std::string Compressible(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7) & 0xff);
  return s;
}

// Reads go to `base`; a Write, Flush or Provision fails the test (from
// whichever thread makes it) and the call, and is counted.
class WriteRefusingDevice : public BlockDevice {
 public:
  explicit WriteRefusingDevice(BlockDevice* base) : base_(base) {}

  Status Read(uint64_t offset, void* buf, size_t len) override {
    return base_->Read(offset, buf, len);
  }
  Status Write(uint64_t offset, const void*, size_t len) override {
    return Refuse("Write of " + std::to_string(len) + " bytes at " + std::to_string(offset));
  }
  Status Flush() override { return Refuse("Flush"); }
  Status Provision(uint64_t offset, uint64_t len) override {
    return Refuse("Provision of " + std::to_string(len) + " bytes at " + std::to_string(offset));
  }
  uint64_t size() const override { return base_->size(); }
  uint64_t ProvisionShortfall() const override { return base_->ProvisionShortfall(); }

  // Shared with the test, which keeps it after the filesystem took the device.
  std::shared_ptr<std::atomic<int>> refused() const { return refused_; }

 private:
  Status Refuse(const std::string& what) {
    refused_->fetch_add(1);
    ADD_FAILURE() << "read-only store asked its device for a " << what;
    return Status::IOError("write-refusing device: " + what);
  }

  BlockDevice* const base_;
  const std::shared_ptr<std::atomic<int>> refused_ = std::make_shared<std::atomic<int>>(0);
};

MountOptions SmallMount() {
  MountOptions m;
  m.memory_budget = 16 << 20;
  m.use_uring = false;
  return m;
}

MountOptions ReadOnlyMount() {
  MountOptions m = SmallMount();
  m.read_only = true;
  return m;
}

class ReadOnlyStoreTest : public ::testing::Test {
 protected:
  ReadOnlyStoreTest() : device_(kStoreSize) {}

  void SetUp() override {
    FormatOptions f;
    f.segment_size = kSegmentSize;
    Status s = FormatDevice(&device_, f);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Writes the tree the tests read back, read-write, and closes the store.
  // With `orphan`, one more file is unlinked while still open, so the log
  // holds an inode with no name that only a mount would free.
  void WriteTree(bool orphan) {
    auto opened = OpenFileSystemOnDevice(BorrowDevice(&device_), SmallMount());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<FileSystem> fs = std::move(opened).value();
    fs->Start();
    auto d = fs->Mkdir(1, "d", 0755, 0, 0);
    ASSERT_TRUE(d.ok());
    big_ = MakeFile(fs.get(), d->st_ino, "big", big_data_);
    small_ = MakeFile(fs.get(), 1, "small", small_data_);
    ASSERT_TRUE(fs->SetXattr(small_, "user.tag", "kept", 0).ok());
    ASSERT_TRUE(fs->Link(small_, d->st_ino, "small-link").ok());
    ASSERT_TRUE(fs->Symlink(1, "link", "d/big", 0, 0).ok());
    auto z = fs->Mkdir(1, "z", 0755, 0, 0);
    ASSERT_TRUE(z.ok());
    ASSERT_TRUE(fs->SetXattr(z->st_ino, "user.ckptfs.compress", "zstd:1", 0).ok());
    packed_ = MakeFile(fs.get(), z->st_ino, "packed", packed_data_);
    if (orphan) {
      orphan_ = MakeFile(fs.get(), 1, "orphan", Random(300000, 9));
      ASSERT_TRUE(fs->OpenFile(orphan_, O_RDONLY).ok());
      ASSERT_TRUE(fs->Unlink(1, "orphan").ok());
      // Closed with the handle still open: the log keeps the inode.
    }
    ASSERT_TRUE(fs->Sync().ok());
    ASSERT_GT(fs->Stats().compressed_runs, 0u);  // the packed file's runs were compressed
    ASSERT_TRUE(fs->Close().ok());
  }

  static uint64_t MakeFile(FileSystem* fs, uint64_t parent, const std::string& name,
                           const std::string& data) {
    auto st = fs->Create(parent, name, 0644, 0, 0);
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    if (!st.ok()) return 0;
    auto w = fs->Write(st->st_ino, 0, data.data(), data.size());
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return st->st_ino;
  }

  // Opens the store read-only over a WriteRefusingDevice.
  std::unique_ptr<FileSystem> OpenReadOnly(MountOptions options = ReadOnlyMount()) {
    auto device = std::make_unique<WriteRefusingDevice>(&device_);
    refused_ = device->refused();
    auto opened = OpenFileSystemOnDevice(std::move(device), options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return nullptr;
    std::unique_ptr<FileSystem> fs = std::move(opened).value();
    fs->Start();
    return fs;
  }

  static std::string ReadAll(FileSystem* fs, uint64_t ino) {
    auto st = fs->GetAttr(ino);
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    if (!st.ok()) return "";
    std::string out(static_cast<size_t>(st->st_size), '\0');
    auto r = fs->Read(ino, 0, out.size(), out.data());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? out.substr(0, *r) : "";
  }

  uint64_t Ino(FileSystem* fs, uint64_t parent, const std::string& name) {
    auto st = fs->Lookup(parent, name);
    EXPECT_TRUE(st.ok()) << name << ": " << st.status().ToString();
    return st.ok() ? st->st_ino : 0;
  }

  MemoryDevice device_;
  std::shared_ptr<std::atomic<int>> refused_;
  const std::string big_data_ = Random(5 * (1 << 20) + 12345, 1);  // runs over three segments
  const std::string small_data_ = "small file\n";
  const std::string packed_data_ = Compressible(3 << 20);
  uint64_t big_ = 0, small_ = 0, packed_ = 0, orphan_ = 0;
};

TEST_F(ReadOnlyStoreTest, EverythingReadsBackAndTheDeviceIsNeverWritten) {
  WriteTree(/*orphan=*/false);
  const std::vector<char> before = device_.bytes();
  const uint64_t flushes = device_.flush_count();
  {
    std::unique_ptr<FileSystem> fs = OpenReadOnly();
    ASSERT_TRUE(fs);
    const uint64_t d = Ino(fs.get(), 1, "d");
    EXPECT_EQ(Ino(fs.get(), d, "big"), big_);
    EXPECT_EQ(ReadAll(fs.get(), big_), big_data_);
    EXPECT_EQ(ReadAll(fs.get(), Ino(fs.get(), 1, "small")), small_data_);
    EXPECT_EQ(Ino(fs.get(), d, "small-link"), small_);
    EXPECT_EQ(fs->GetAttr(small_)->st_nlink, 2u);
    EXPECT_EQ(*fs->GetXattr(small_, "user.tag"), "kept");
    EXPECT_EQ(*fs->ListXattr(small_), std::string("user.tag\0", 9));
    EXPECT_EQ(*fs->ReadLink(Ino(fs.get(), 1, "link")), "d/big");
    EXPECT_EQ(ReadAll(fs.get(), Ino(fs.get(), Ino(fs.get(), 1, "z"), "packed")), packed_data_);
    // A piece from the middle of a compressed run and one across two runs.
    std::string piece(300000, '\0');
    auto r = fs->Read(packed_, (1 << 20) - 1000, piece.size(), piece.data());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(piece, packed_data_.substr((1 << 20) - 1000, piece.size()));
    std::vector<std::string> names;
    ASSERT_TRUE(fs->ReadDir(1, 0, /*plus=*/true, [&](std::string_view name, const struct stat&,
                                                       uint64_t) {
                      names.emplace_back(name);
                      return true;
                    }).ok());
    // Positions follow the names (meta/dir_cookie.h), not their order of making.
    std::sort(names.begin() + 2, names.end());
    EXPECT_EQ(names, (std::vector<std::string>{".", "..", "d", "link", "small", "z"}));
    EXPECT_TRUE(fs->StatFs().f_flag & ST_RDONLY);
    const StoreStats stats = fs->Stats();
    EXPECT_TRUE(stats.read_only);
    EXPECT_EQ(stats.bytes_written, 0u);
    EXPECT_EQ(stats.data_device_bytes + stats.metadata_device_bytes, 0u);
    EXPECT_EQ(stats.commits, 0u);
    // fsync of what was opened for reading, and the last use of each inode.
    ASSERT_TRUE(fs->OpenFile(big_, O_RDONLY).ok());
    EXPECT_TRUE(fs->Sync().ok());
    fs->ReleaseFile(big_);
    fs->Forget(big_, 1);
    fs->Forget(small_, 2);
    EXPECT_TRUE(fs->Close().ok());
  }
  EXPECT_EQ(refused_->load(), 0);
  EXPECT_EQ(device_.flush_count(), flushes);
  EXPECT_TRUE(device_.bytes() == before) << "the read-only store changed its device";
}

TEST_F(ReadOnlyStoreTest, EveryChangeIsRefusedWithTheReadOnlyStatus) {
  WriteTree(/*orphan=*/false);
  const std::vector<char> before = device_.bytes();
  std::unique_ptr<FileSystem> fs = OpenReadOnly();
  ASSERT_TRUE(fs);
  const uint64_t d = Ino(fs.get(), 1, "d");
  auto refused = [](const Status& s) {
    return s.IsReadOnly() ? ::testing::AssertionSuccess()
                          : ::testing::AssertionFailure() << s.ToString();
  };
  EXPECT_TRUE(refused(fs->Create(1, "new", 0644, 0, 0).status()));
  EXPECT_TRUE(refused(fs->Mknod(1, "fifo", S_IFIFO | 0644, 0, 0, 0).status()));
  EXPECT_TRUE(refused(fs->Mkdir(1, "dir", 0755, 0, 0).status()));
  EXPECT_TRUE(refused(fs->Symlink(1, "sym", "small", 0, 0).status()));
  EXPECT_TRUE(refused(fs->Link(small_, 1, "another").status()));
  EXPECT_TRUE(refused(fs->Unlink(1, "small")));
  EXPECT_TRUE(refused(fs->Unlink(1, "no-such-file")));  // refused before it is looked for
  EXPECT_TRUE(refused(fs->Rmdir(1, "z")));
  EXPECT_TRUE(refused(fs->Rename(1, "small", 1, "renamed", 0)));
  EXPECT_TRUE(refused(fs->Rename(1, "small", d, "big", RENAME_EXCHANGE)));
  EXPECT_TRUE(refused(fs->Write(big_, 0, "x", 1).status()));
  EXPECT_TRUE(refused(fs->Write(packed_, 1 << 20, "y", 1).status()));  // a compressing file
  AttrChange chmod;
  chmod.set_mode = true;
  chmod.mode = S_IFREG | 0600;
  EXPECT_TRUE(refused(fs->SetAttr(small_, chmod).status()));
  AttrChange truncate;
  truncate.set_size = true;
  EXPECT_TRUE(refused(fs->SetAttr(big_, truncate).status()));
  AttrChange touch;
  touch.set_mtime = touch.mtime_now = true;
  EXPECT_TRUE(refused(fs->SetAttr(big_, touch).status()));
  EXPECT_TRUE(refused(fs->Fallocate(big_, 0, 0, 1 << 20)));
  EXPECT_TRUE(refused(fs->Fallocate(big_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096)));
  EXPECT_TRUE(refused(fs->SetXattr(small_, "user.new", "v", 0)));
  EXPECT_TRUE(refused(fs->SetXattr(d, "user.ckptfs.compress", "zstd:3", 0)));
  EXPECT_TRUE(refused(fs->RemoveXattr(small_, "user.tag")));
  EXPECT_TRUE(refused(fs->OpenFile(big_, O_WRONLY)));
  EXPECT_TRUE(refused(fs->OpenFile(big_, O_RDWR)));
  EXPECT_TRUE(refused(fs->OpenFile(big_, O_RDONLY | O_TRUNC)));
  ASSERT_TRUE(fs->OpenFile(big_, O_RDONLY).ok());
  fs->ReleaseFile(big_);
  EXPECT_TRUE(fs->Sync().ok());
  // Nothing changed, in memory either.
  EXPECT_EQ(ReadAll(fs.get(), big_), big_data_);
  EXPECT_EQ(fs->GetAttr(small_)->st_mode, S_IFREG | 0644u);
  EXPECT_EQ(*fs->GetXattr(small_, "user.tag"), "kept");
  EXPECT_TRUE(fs->Lookup(1, "new").status().IsNotFound());
  EXPECT_TRUE(fs->Close().ok());
  fs.reset();
  EXPECT_EQ(refused_->load(), 0);
  EXPECT_TRUE(device_.bytes() == before);
}

// Freeing an orphan takes a record, so a read-only open leaves it (no name
// reaches it); the next read-write open frees it as before.
TEST_F(ReadOnlyStoreTest, OrphansAreLeftForAReadWriteOpenToFree) {
  WriteTree(/*orphan=*/true);
  const std::vector<char> before = device_.bytes();
  uint64_t inodes_read_only = 0;
  {
    std::unique_ptr<FileSystem> fs = OpenReadOnly();
    ASSERT_TRUE(fs);
    inodes_read_only = fs->Stats().inodes;
    EXPECT_TRUE(fs->Lookup(1, "orphan").status().IsNotFound());
    EXPECT_EQ(ReadAll(fs.get(), big_), big_data_);
    EXPECT_TRUE(fs->Close().ok());
  }
  EXPECT_EQ(refused_->load(), 0);
  EXPECT_TRUE(device_.bytes() == before);

  auto opened = OpenFileSystemOnDevice(BorrowDevice(&device_), SmallMount());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<FileSystem> fs = std::move(opened).value();
  EXPECT_EQ(fs->Stats().inodes, inodes_read_only - 1);
  EXPECT_TRUE(fs->GetAttr(orphan_).status().IsNotFound());
  EXPECT_EQ(ReadAll(fs.get(), big_), big_data_);
  EXPECT_TRUE(fs->Close().ok());
}

// The committer, the cleaner and the compressors never start: options that
// set them to work on a read-write store (a commit every 10 ms, idle
// recompression of the raw data of a compressing directory, dead space)
// write nothing read-only, however long the store stays open.
TEST_F(ReadOnlyStoreTest, NoBackgroundWorkWritesAnything) {
  {
    // Stored raw (compress_when=idle): what an idle read-write mount would
    // rewrite compressed. The deleted files leave dead space to clean.
    MountOptions idle = SmallMount();
    idle.compress_when_idle = true;
    auto opened = OpenFileSystemOnDevice(BorrowDevice(&device_), idle);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<FileSystem> fs = std::move(opened).value();
    fs->Start();
    auto z = fs->Mkdir(1, "z", 0755, 0, 0);
    ASSERT_TRUE(z.ok());
    ASSERT_TRUE(fs->SetXattr(z->st_ino, "user.ckptfs.compress", "zstd:1", 0).ok());
    packed_ = MakeFile(fs.get(), z->st_ino, "raw", packed_data_);
    for (int i = 0; i < 8; ++i) {
      const std::string name = "dead" + std::to_string(i);
      fs->Forget(MakeFile(fs.get(), 1, name, Random(1 << 20, i)), 1);
      ASSERT_TRUE(fs->Unlink(1, name).ok());
    }
    ASSERT_TRUE(fs->Close().ok());
  }
  const std::vector<char> before = device_.bytes();
  MountOptions busy = ReadOnlyMount();
  busy.commit_interval_ms = 10;
  busy.compress_when_idle = true;
  busy.clean_rate_bytes = 0;
  {
    // The same options on a read-write open of a copy set the cleaner to
    // work within seconds: what the read-only open below must not do.
    MemoryDevice copy(kStoreSize);
    copy.bytes() = device_.bytes();
    MountOptions rw = busy;
    rw.read_only = false;
    auto opened = OpenFileSystemOnDevice(BorrowDevice(&copy), rw);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<FileSystem> fs = std::move(opened).value();
    fs->Start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (fs->Stats().compressed_runs == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GT(fs->Stats().compressed_runs, 0u);
    EXPECT_TRUE(fs->Close().ok());
  }
  std::unique_ptr<FileSystem> fs = OpenReadOnly(busy);
  ASSERT_TRUE(fs);
  // The cleaner looks every 100 ms and recompresses after a second idle.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(ReadAll(fs.get(), packed_), packed_data_);
  EXPECT_EQ(fs->Stats().compressed_runs, 0u);
  EXPECT_EQ(fs->Stats().commits, 0u);
  EXPECT_TRUE(fs->Close().ok());
  fs.reset();
  EXPECT_EQ(refused_->load(), 0);
  EXPECT_TRUE(device_.bytes() == before);
}

// One writer or any number of readers per store file: the device lock is
// exclusive for a read-write open and shared for a read-only one.
TEST(ReadOnlyOpenTest, ReadersShareAStoreAndExcludeAWriter) {
  testing::TempDir dir("ckptfs-read-only");
  const std::string store = dir.path() + "/store.img";
  FormatOptions f;
  f.size = 32 << 20;
  f.segment_size = kSegmentSize;
  ASSERT_TRUE(FileSystem::Format(store, f).ok());

  {
    auto reader = FileSystem::Open(store, ReadOnlyMount());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto second_reader = FileSystem::Open(store, ReadOnlyMount());
    EXPECT_TRUE(second_reader.ok()) << second_reader.status().ToString();
    auto writer = FileSystem::Open(store, SmallMount());
    ASSERT_FALSE(writer.ok());
    EXPECT_EQ(writer.status().code(), Status::Code::kBusy) << writer.status().ToString();
  }  // the readers close, and let go of the store
  auto writer = FileSystem::Open(store, SmallMount());
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  auto refused = FileSystem::Open(store, ReadOnlyMount());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kBusy);
  EXPECT_NE(refused.status().message().find("in use by a writer"), std::string::npos)
      << refused.status().ToString();
}

// The store file itself, through FileSystem::Open: opened O_RDONLY, and not
// one byte of it changes.
TEST(ReadOnlyOpenTest, AStoreFileOpenedReadOnlyIsLeftByteForByte) {
  testing::TempDir dir("ckptfs-read-only");
  const std::string store = dir.path() + "/store.img";
  FormatOptions f;
  f.size = 32 << 20;
  f.segment_size = kSegmentSize;
  ASSERT_TRUE(FileSystem::Format(store, f).ok());
  const std::string data = Random(3 << 20, 4);
  {
    auto opened = FileSystem::Open(store, SmallMount());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<FileSystem> fs = std::move(opened).value();
    fs->Start();
    auto st = fs->Create(1, "f", 0644, 0, 0);
    ASSERT_TRUE(st.ok());
    ASSERT_TRUE(fs->Write(st->st_ino, 0, data.data(), data.size()).ok());
    ASSERT_TRUE(fs->Close().ok());
  }
  auto contents = [&] {
    std::ifstream in(store, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string before = contents();
  {
    MountOptions ro = ReadOnlyMount();
    ro.use_uring = true;  // read-only takes the plain device whatever is asked
    auto opened = FileSystem::Open(store, ro);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<FileSystem> fs = std::move(opened).value();
    fs->Start();
    auto st = fs->Lookup(1, "f");
    ASSERT_TRUE(st.ok());
    std::string back(data.size(), '\0');
    ASSERT_EQ(*fs->Read(st->st_ino, 0, back.size(), back.data()), data.size());
    EXPECT_EQ(back, data);
    EXPECT_TRUE(fs->Create(1, "g", 0644, 0, 0).status().IsReadOnly());
    EXPECT_TRUE(fs->Close().ok());
  }
  EXPECT_TRUE(contents() == before);
}

}  // namespace
}  // namespace ckptfs
