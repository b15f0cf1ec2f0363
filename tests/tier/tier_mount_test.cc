// The RADOS tier through real mounts on a real Ceph cluster (CephCluster):
// drain and wait, a daemon killed mid-drain, the local store lost and the
// image mounted from RADOS, a second writer refused, a hung writer fenced
// off by a takeover, an image removed, an unreachable cluster, and two nodes
// draining at once with a third restoring both.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "ceph_cluster.h"
#include "file_util.h"
#include "mounted_store.h"

namespace ckptfs::testing {
namespace {

using Files = std::map<std::string, std::string>;  // relative path -> content

std::string Q(const std::string& s) { return "'" + s + "'"; }

class TierTest : public ::testing::Test {
 protected:
  static std::string Image(const std::string& stem) { return CephCluster::UniqueImage(stem); }
  static std::string Spec(const std::string& image) { return std::string("rados:") + CephCluster::kPool + "/" + image; }
  // The drain runs at once (drain_defer=0), so kills and faults meet it
  // mid-way rather than waiting for the burst to end.
  static std::vector<std::string> TierOptions(const std::string& image) {
    return {"tier=" + Spec(image), "ceph_conf=" + CephCluster::Conf(), "rados_timeout=10", "drain_defer=0"};
  }
  static std::string Tool() { return MountedStore::BinDir() + "/ckptfs-tier"; }
  // `ckptfs-tier remove` of the image, stdout and stderr together.
  static CommandOutput RemoveImage(const std::string& image, const std::string& flags = "") {
    return Capture(Tool() + " remove " + Spec(image) + " --ceph-conf " + CephCluster::Conf() + " " + flags + " 2>&1");
  }
  // The names of the image's objects, as `rados ls` lists its namespace.
  static std::string ObjectsOf(const std::string& image) {
    CommandOutput out = Capture("rados -c " + CephCluster::Conf() + " -p " + CephCluster::kPool + " -N " +
                                Q(image) + " ls");
    EXPECT_EQ(out.rc, 0) << out.out;
    return out.out;
  }
  static int Wait(const MountedStore& m, int seconds = 120) {
    return MountedStore::Run(Tool() + " wait " + Q(m.mountpoint()) + " --timeout " + std::to_string(seconds));
  }
  // A figure of the mount's drain (ckptfs-tier status --json).
  static uint64_t TierFigure(const MountedStore& m, const std::string& key) {
    CommandOutput out = Capture(Tool() + " status --json " + Q(m.mountpoint()));
    auto json = nlohmann::json::parse(out.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(json.is_object()) << "ckptfs-tier status --json printed: " << out.out;
    return json.is_object() ? json.value(key, 0ull) : 0;
  }
  // Writes a checkpoint-like set of files: a few MB, a directory, an empty
  // file and a symlink; returns what it wrote.
  static Files WriteCheckpoint(const MountedStore& m, const std::string& dir, size_t big, uint32_t seed) {
    Files files;
    EXPECT_EQ(mkdir(m.Path(dir).c_str(), 0755), 0);
    files[dir + "/model.pt"] = Random(big, seed);
    files[dir + "/optim.pt"] = Random(big / 3 + 4097, seed + 1);
    files[dir + "/meta.json"] = "{\"step\": " + std::to_string(seed) + "}";
    files[dir + "/empty"] = "";
    for (const auto& [path, content] : files) {
      errno = 0;
      EXPECT_TRUE(WriteFile(m.Path(path), content, true)) << path << ": " << std::strerror(errno) << "\n" << m.log();
    }
    EXPECT_EQ(symlink("model.pt", m.Path(dir + "/latest").c_str()), 0);
    return files;
  }
  // A node's store takes one checkpoint (its big file `big` bytes), drains
  // it to `image` and is unmounted (the unmount waits for the drain).
  static void DrainOneCheckpoint(const std::string& image, size_t big, Files* files) {
    MountedStore node;
    ASSERT_EQ(node.Format("1G"), 0);
    ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
    *files = WriteCheckpoint(node, "step7", big, 7);
    ASSERT_EQ(node.Unmount(), 0) << node.log();
  }
  // Two stores formatted; the first mounted on `image` with a checkpoint
  // (its big file `big` bytes) drained.
  static void TwoStoresTheFirstDrained(const std::string& image, MountedStore& first, MountedStore& second,
                                       size_t big, uint32_t seed) {
    ASSERT_EQ(first.Format("1G"), 0);
    ASSERT_EQ(second.Format("1G"), 0);
    ASSERT_TRUE(first.Mount(TierOptions(image))) << first.log();
    WriteCheckpoint(first, "a", big, seed);
    ASSERT_EQ(Wait(first), 0);
  }
  static uint64_t BytesOf(const Files& files) {
    uint64_t bytes = 0;
    for (const auto& [path, content] : files) bytes += content.size();
    return bytes;
  }
  // A checkpoint drained to a new image, and what a node restoring it with
  // a cache file beside `restore`'s store mounts it with.
  struct CachedRestore {
    std::string image;
    Files files;
    uint64_t file_bytes = 0;
    std::string cache;
    std::vector<std::string> options;
  };
  static void PrepareCachedRestore(const std::string& stem, size_t big, const MountedStore& restore,
                                   CachedRestore* r) {
    r->image = Image(stem);
    ASSERT_NO_FATAL_FAILURE(DrainOneCheckpoint(r->image, big, &r->files));
    r->file_bytes = BytesOf(r->files);
    r->cache = restore.store() + ".cache";
    r->options = {"ceph_conf=" + CephCluster::Conf(), "cache=" + r->cache};
  }
  // The node is gone with its store: unmounts it, deletes the store and
  // mounts the image from RADOS elsewhere, which must hold `files`.
  static void LoseTheNodeAndRestore(MountedStore& node, const std::string& image, const Files& files) {
    ASSERT_EQ(node.Unmount(), 0) << node.log();
    ASSERT_EQ(unlink(node.store().c_str()), 0);
    MountedStore elsewhere;
    ASSERT_TRUE(elsewhere.MountFrom(Spec(image), {"ceph_conf=" + CephCluster::Conf()})) << elsewhere.log();
    ExpectFiles(elsewhere, files);
    EXPECT_EQ(elsewhere.Unmount(), 0) << elsewhere.log();
  }
  // A figure of the store (ckptfs-stat --json, its "store" object).
  static uint64_t StoreFigure(const MountedStore& m, const std::string& key) {
    CommandOutput out = Capture(MountedStore::BinDir() + "/ckptfs-stat --json " + Q(m.mountpoint()));
    auto json = nlohmann::json::parse(out.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(json.is_object() && json.contains("store")) << "ckptfs-stat --json printed: " << out.out;
    return json.is_object() && json.contains("store") ? json["store"].value(key, 0ull) : 0;
  }
  static void ExpectFiles(const MountedStore& m, const Files& files) {
    for (const auto& [path, content] : files) {
      const std::string got = ReadFile(m.Path(path));
      EXPECT_EQ(got.size(), content.size()) << path;
      EXPECT_TRUE(got == content) << path << " differs";
    }
  }
};

TEST_F(TierTest, DrainWaitThenTheStoreIsLostAndTheImageMountsFromRados) {
  const std::string image = Image("lost");
  Files files;
  {
    MountedStore node;
    ASSERT_EQ(node.Format("1G"), 0);
    ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
    files = WriteCheckpoint(node, "step100", 24 << 20, 100);
    ASSERT_EQ(Wait(node), 0) << node.log();
    EXPECT_GE(TierFigure(node, "uploaded_bytes"), 32u << 20);
    EXPECT_EQ(TierFigure(node, "drained_lsn"), TierFigure(node, "committed_lsn"));
    // Written after the wait: not promised, but unmount drains it too.
    files["step100/after_wait"] = Random(1 << 20, 7);
    ASSERT_TRUE(WriteFile(node.Path("step100/after_wait"), files["step100/after_wait"]));
    ASSERT_EQ(node.Unmount(), 0) << node.log();
    // The node is gone: its store with it.
    ASSERT_EQ(unlink(node.store().c_str()), 0);
  }
  EXPECT_EQ(MountedStore::Run(Tool() + " status " + Spec(image) + " --ceph-conf " + CephCluster::Conf()), 0);
  // fsck reads the image as the device it describes: every checksum verified.
  CommandOutput fsck = Capture(MountedStore::BinDir() + "/ckptfs-fsck " + Spec(image) + " --ceph-conf " +
                               CephCluster::Conf());
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
  EXPECT_NE(fsck.out.find("clean"), std::string::npos) << fsck.out;
  MountedStore elsewhere;
  ASSERT_TRUE(elsewhere.MountFrom(Spec(image), {"ceph_conf=" + CephCluster::Conf()})) << elsewhere.log();
  ExpectFiles(elsewhere, files);
  EXPECT_EQ(ReadFile(elsewhere.Path("step100/latest")), files["step100/model.pt"]) << "the symlink";
  // Read-only: the image has one writer, and it is not this mount.
  errno = 0;
  EXPECT_FALSE(WriteFile(elsewhere.Path("step100/new"), "x"));
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(elsewhere.Unmount(), 0) << elsewhere.log();
}

TEST_F(TierTest, TheDrainWritesChunksOfTheSizeItIsToldAndAnotherSizeResumesThem) {
  // The checkpoint is in the store before the tier is attached, so one
  // drain cycle sends it in whole ranges, cut only by the write size and
  // the store's 8 MiB segments.
  MountedStore node;
  ASSERT_EQ(node.Format("1G", "8M"), 0);
  ASSERT_TRUE(node.Mount()) << node.log();
  const Files files = WriteCheckpoint(node, "step7", 24 << 20, 7);
  ASSERT_EQ(node.Unmount(), 0) << node.log();
  struct Case {
    uint64_t write;
    uint64_t largest_chunk;
  };
  for (const Case& c : {Case{1 << 20, 1 << 20}, Case{4 << 20, 4 << 20}, Case{16 << 20, 8 << 20}}) {
    SCOPED_TRACE("drain_write=" + std::to_string(c.write));
    const std::string image = Image("write-size");
    std::vector<std::string> options = TierOptions(image);
    options.push_back("drain_write=" + std::to_string(c.write));
    ASSERT_TRUE(node.Mount(options)) << node.log();
    ASSERT_EQ(Wait(node), 0) << node.log();
    ASSERT_EQ(node.Unmount(), 0) << node.log();
    CommandOutput out = Capture("CEPH_CONF=" + Q(CephCluster::Conf()) + " " + Tool() + " status --json " + Q(Spec(image)));
    auto json = nlohmann::json::parse(out.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(json.is_object()) << out.out;
    EXPECT_EQ(json.value("largest_chunk", 0ull), c.largest_chunk) << out.out;
    const uint64_t image_bytes = json.value("bytes", 0ull);
    ASSERT_GE(image_bytes, BytesOf(files)) << out.out;
    // Mounted again at the default size, the store's daemon adopts every
    // chunk, whatever its size, and sends only what is new since (the
    // mount's own log records), not the image again.
    ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
    ASSERT_EQ(Wait(node), 0) << node.log();
    WaitFor([&] { return TierFigure(node, "adopted_bytes") > 0; }, 30, std::chrono::milliseconds(100));
    EXPECT_GE(TierFigure(node, "adopted_bytes"), image_bytes);
    EXPECT_LT(TierFigure(node, "uploaded_bytes"), 1u << 20);
    ASSERT_EQ(node.Unmount(), 0) << node.log();
    MountedStore elsewhere;
    ASSERT_TRUE(elsewhere.MountFrom(Spec(image), {"ceph_conf=" + CephCluster::Conf()})) << elsewhere.log();
    ExpectFiles(elsewhere, files);
    EXPECT_EQ(elsewhere.Unmount(), 0) << elsewhere.log();
  }
}

// Reads of an image check every run against the checksum it was written
// with (the OSDs' and the messenger's own checks cover the bytes on their
// way, not what was written into the object): a byte damaged inside RADOS
// fails the reads of its run with EIO and never reaches a reader, fsck
// finds it, and every other file still reads whole.
TEST_F(TierTest, AByteDamagedInRadosFailsTheReadsOfItsRunAndNothingElse) {
  const std::string image = Image("damaged");
  Files files;
  ASSERT_NO_FATAL_FAILURE(DrainOneCheckpoint(image, 24 << 20, &files));
  const std::string rados =
      "CEPH_CONF=" + Q(CephCluster::Conf()) + " rados -p " + CephCluster::kPool + " -N " + Q(image);
  CommandOutput ls = Capture(rados + " ls");
  ASSERT_EQ(ls.rc, 0) << ls.out;
  const std::string copy = ::testing::TempDir() + "/damaged-object";
  int damaged = 0;
  std::istringstream names(ls.out);
  for (std::string name; std::getline(names, name);) {
    if (name.rfind("seg.", 0) != 0) continue;  // not a segment's object
    ASSERT_EQ(MountedStore::Run(rados + " get " + Q(name) + " " + Q(copy)), 0);
    {
      std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(0, std::ios::end);
      const std::streamoff size = f.tellg();
      if (size <= (1 << 20) + 100) continue;
      f.seekg((1 << 20) + 100);
      const char was = static_cast<char>(f.get());
      f.seekp((1 << 20) + 100);
      f.put(static_cast<char>(was ^ 0x01));
      ASSERT_TRUE(f.good());
    }
    ASSERT_EQ(MountedStore::Run(rados + " put " + Q(name) + " " + Q(copy)), 0);
    ++damaged;
  }
  unlink(copy.c_str());
  ASSERT_GT(damaged, 0) << "no segment object to damage: " << ls.out;

  MountedStore elsewhere;
  ASSERT_TRUE(elsewhere.MountFrom(Spec(image), {"ceph_conf=" + CephCluster::Conf()})) << elsewhere.log();
  int failed = 0;
  for (const auto& [path, content] : files) {
    auto [got, err] = ReadFileOrErrno(elsewhere.Path(path));
    if (err != 0) {
      EXPECT_EQ(err, EIO) << path;
      ++failed;
    } else {
      EXPECT_TRUE(got == content) << path << " read without an error, but not its bytes";
    }
  }
  EXPECT_GT(failed, 0) << "no read met the damaged byte";
  EXPECT_LT(failed, static_cast<int>(files.size())) << "undamaged files failed too";
  EXPECT_EQ(elsewhere.Unmount(), 0) << elsewhere.log();
  CommandOutput fsck = Capture(MountedStore::BinDir() + "/ckptfs-fsck " + Spec(image) + " --ceph-conf " +
                               CephCluster::Conf());
  EXPECT_NE(fsck.rc, 0) << fsck.out;
  EXPECT_NE(fsck.out.find("checksum"), std::string::npos) << fsck.out;
}

// A figure of the mount's daemon: `key` of `section` in ckptfs-stat --json.
uint64_t StatFigure(const MountedStore& m, const std::string& section, const std::string& key) {
  CommandOutput out = Capture(MountedStore::BinDir() + "/ckptfs-stat --json " + Q(m.mountpoint()));
  auto json = nlohmann::json::parse(out.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(json.is_object()) << "ckptfs-stat --json printed: " << out.out;
  if (!json.is_object() || !json.contains(section)) return 0;
  return json[section].value(key, 0ull);
}

// The FUSE read requests the mount's daemon has served.
uint64_t ReadRequests(const MountedStore& m) { return StatFigure(m, "fuse_requests", "read"); }

// The bytes of `path` through a shared read-only mapping, as numpy's
// memmap and safetensors read a file.
std::string ReadMappedShared(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return "open failed: " + std::string(std::strerror(errno));
  struct stat st;
  fstat(fd, &st);
  void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  const int map_errno = errno;
  close(fd);
  if (map == MAP_FAILED) return "mmap failed: " + std::string(std::strerror(map_errno));
  std::string bytes(static_cast<const char*>(map), static_cast<size_t>(st.st_size));
  munmap(map, static_cast<size_t>(st.st_size));
  return bytes;
}

// Whether the kernel can map a direct-I/O file shared
// (FUSE_DIRECT_IO_ALLOW_MMAP, Linux 6.6); without it an image mount keeps
// the page cache.
bool KernelMapsDirectIoFilesShared() {
  struct utsname u;
  if (uname(&u) != 0) return false;
  int major = 0, minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 6 || (major == 6 && minor >= 6);
}

TEST_F(TierTest, AnImageMountReadsPastThePageCacheAndStillMapsFilesShared) {
  const std::string image = Image("direct");
  Files files;
  ASSERT_NO_FATAL_FAILURE(DrainOneCheckpoint(image, 8 << 20, &files));
  const std::string& model = files["step7/model.pt"];
  // Each read() reaches the daemon (in requests of 1 MiB at most), also the
  // second time; with -o page_cache the second is the kernel's alone.
  uint64_t second_read_requests[2] = {0, 0};
  for (bool page_cache : {false, true}) {
    std::vector<std::string> options = {"ceph_conf=" + CephCluster::Conf()};
    if (page_cache) options.push_back("page_cache");
    MountedStore elsewhere;
    ASSERT_TRUE(elsewhere.MountFrom(Spec(image), options)) << elsewhere.log();
    EXPECT_TRUE(ReadFile(elsewhere.Path("step7/model.pt")) == model);
    const uint64_t before = ReadRequests(elsewhere);
    EXPECT_TRUE(ReadFile(elsewhere.Path("step7/model.pt")) == model);
    second_read_requests[page_cache] = ReadRequests(elsewhere) - before;
    EXPECT_TRUE(ReadMappedShared(elsewhere.Path("step7/model.pt")) == model)
        << "page_cache=" << page_cache << ": " << ReadMappedShared(elsewhere.Path("step7/model.pt")).substr(0, 80);
    ExpectFiles(elsewhere, files);
    EXPECT_EQ(elsewhere.Unmount(), 0) << elsewhere.log();
  }
  if (KernelMapsDirectIoFilesShared()) {
    EXPECT_GE(second_read_requests[false], model.size() >> 20);
    EXPECT_LT(second_read_requests[true], second_read_requests[false]);
  } else {
    // The documented fallback: the page cache, as with -o page_cache.
    EXPECT_LT(second_read_requests[false], model.size() >> 20);
  }
}

// The first `len` bytes of `path`, in one read().
std::string ReadHead(const std::string& path, size_t len) {
  std::string bytes(len, '\0');
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return "open failed: " + std::string(std::strerror(errno));
  const ssize_t n = pread(fd, bytes.data(), len, 0);
  close(fd);
  bytes.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return bytes;
}

TEST_F(TierTest, AnImageMountLoadsAheadOfASequentialReader) {
  const std::string image = Image("ahead");
  Files files;
  ASSERT_NO_FATAL_FAILURE(DrainOneCheckpoint(image, 16 << 20, &files));
  const std::string& model = files["step7/model.pt"];
  ASSERT_GE(model.size(), 16u << 20);
  for (bool prefetch : {true, false}) {
    std::vector<std::string> options = {"ceph_conf=" + CephCluster::Conf()};
    if (!prefetch) options.push_back("prefetch=0");
    MountedStore elsewhere;
    ASSERT_TRUE(elsewhere.MountFrom(Spec(image), options)) << elsewhere.log();
    // The first MiB asked for; with the default window the next 4 MiB come
    // from RADOS without being asked. (Replaying the image's log at mount
    // read from RADOS too.)
    const uint64_t read_at_mount = StatFigure(elsewhere, "store", "remote_read_bytes");
    EXPECT_TRUE(ReadHead(elsewhere.Path("step7/model.pt"), 1 << 20) == model.substr(0, 1 << 20));
    if (prefetch) {
      // The bytes are counted as they arrive, the runs once they are in the
      // cache: both are waited for.
      uint64_t ahead = 0, prefetched = 0;
      WaitFor(
          [&] {
            ahead = StatFigure(elsewhere, "store", "remote_read_bytes") - read_at_mount;
            prefetched = StatFigure(elsewhere, "store", "prefetched_runs");
            return ahead >= (4u << 20) && prefetched >= 3;
          },
          60, std::chrono::milliseconds(100));
      EXPECT_GE(ahead, 4u << 20);
      EXPECT_GE(prefetched, 3u);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      EXPECT_EQ(StatFigure(elsewhere, "store", "prefetched_runs"), 0u);
      // The run or two under the first MiB.
      EXPECT_LE(StatFigure(elsewhere, "store", "remote_read_bytes") - read_at_mount, 2u << 20);
    }
    EXPECT_TRUE(ReadFile(elsewhere.Path("step7/model.pt")) == model) << "prefetch " << prefetch;
    ExpectFiles(elsewhere, files);
    EXPECT_EQ(elsewhere.Unmount(), 0) << elsewhere.log();
  }
}

// `ceph osd pause` for as long as it lives: the OSDs serve no reads or
// writes, as when a cluster is too busy to keep up. Unpaused when it goes,
// whatever the test's outcome, so the tests after it find a working cluster.
class PausedCluster {
 public:
  PausedCluster() : paused_(CephCluster::Ceph("osd pause") == 0) {}
  ~PausedCluster() {
    if (paused_) {
      EXPECT_EQ(CephCluster::Ceph("osd unpause"), 0) << "see " << CephCluster::Dir() << "/tests.log";
    }
  }
  PausedCluster(const PausedCluster&) = delete;
  PausedCluster& operator=(const PausedCluster&) = delete;
  bool paused() const { return paused_; }

 private:
  const bool paused_;
};

TEST_F(TierTest, ADaemonKilledMidDrainResumesWithoutResendingWhatArrived) {
  const std::string image = Image("killed");
  MountedStore node;
  ASSERT_EQ(node.Format("2G"), 0);
  ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
  Files files = WriteCheckpoint(node, "step1", 48 << 20, 1);
  ASSERT_EQ(Wait(node), 0) << node.log();
  const uint64_t first_image = TierFigure(node, "image_bytes");
  ASSERT_GE(first_image, 64u << 20);
  // A larger checkpoint, draining while it is written; then the cluster
  // stops taking writes and a third checkpoint commits that cannot reach
  // it, so the kill comes mid-drain however fast the drain kept pace.
  Files more = WriteCheckpoint(node, "step2", 240 << 20, 2);
  files.insert(more.begin(), more.end());
  {
    PausedCluster paused;
    ASSERT_TRUE(paused.paused()) << "see " << CephCluster::Dir() << "/tests.log";
    // The daemon's client holds writes back once it has the map that says
    // so, which the OSDs send with the reply to its next write: a
    // checkpoint whose writes all left before that could still arrive,
    // so another follows.
    bool behind = false;
    for (uint32_t step = 3; step <= 5 && !behind; ++step) {
      more = WriteCheckpoint(node, "step" + std::to_string(step), 16 << 20, step);
      files.insert(more.begin(), more.end());
      behind = TierFigure(node, "drained_lsn") < TierFigure(node, "committed_lsn");
    }
    EXPECT_TRUE(behind) << "every checkpoint reached a paused cluster";
    node.Kill();
  }

  ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
  ASSERT_EQ(Wait(node), 0) << node.log();
  // What the published image held was checked against the store and kept.
  EXPECT_GE(TierFigure(node, "adopted_bytes"), first_image);
  EXPECT_LE(TierFigure(node, "uploaded_bytes"), TierFigure(node, "image_bytes") - first_image);
  // The new daemon sends before it lists the image, so it hands out again
  // the ids of the objects the killed one left: every chunk the image names
  // must still check.
  CommandOutput fsck = Capture(MountedStore::BinDir() + "/ckptfs-fsck " + Spec(image) + " --ceph-conf " +
                               CephCluster::Conf());
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
  LoseTheNodeAndRestore(node, image, files);
}

TEST_F(TierTest, TheDeviceIsACacheHoldingMoreCheckpointsThanFitAndReadsEvictedOnesFromRados) {
  const std::string image = Image("cache");
  MountedStore node;
  // 96 MiB of 4 MiB segments: about 80 MiB for data once the reserves are
  // kept; five checkpoints of 27 MiB each are 135 MiB.
  ASSERT_EQ(node.Format("96M"), 0);
  ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
  Files files;
  for (uint32_t step = 1; step <= 5; ++step) {
    Files ckpt = WriteCheckpoint(node, "step" + std::to_string(step), 20 << 20, step);
    files.insert(ckpt.begin(), ckpt.end());
    // Off the node before the next one: what the image holds may be evicted.
    ASSERT_EQ(Wait(node), 0) << node.log();
  }
  const uint64_t evicted = StoreFigure(node, "evicted_segments");
  EXPECT_GT(evicted, 0u) << "five checkpoints fit without evicting: the test proves nothing";
  EXPECT_GT(StoreFigure(node, "remote_objects"), 0u);
  // Every checkpoint reads back; the first ones come from RADOS.
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  ExpectFiles(node, files);
  EXPECT_GT(StoreFigure(node, "remote_reads"), 0u);
  EXPECT_EQ(StoreFigure(node, "read_errors"), 0u);
  // Deleting an evicted checkpoint frees nothing here but leaves the image
  // consistent: it is dropped from the next manifest.
  for (const char* name : {"model.pt", "optim.pt", "meta.json", "empty", "latest"}) {
    ASSERT_EQ(unlink(node.Path(std::string("step1/") + name).c_str()), 0) << name;
    files.erase(std::string("step1/") + name);
  }
  ASSERT_EQ(rmdir(node.Path("step1").c_str()), 0);
  ASSERT_EQ(Wait(node), 0) << node.log();
  EXPECT_GT(StoreFigure(node, "remote_objects"), 0u) << "nothing evicted is left: the remount proves nothing";

  // A new daemon reads what an earlier one evicted, from its first read on.
  ASSERT_EQ(node.Unmount(), 0) << node.log();
  CommandOutput fsck = Capture(MountedStore::BinDir() + "/ckptfs-fsck " + Q(node.store()));
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
  EXPECT_NE(fsck.out.find("evicted to the tier"), std::string::npos) << fsck.out;
  // Read-only, the store reads its evicted runs from the image tier= names,
  // draining nothing; without it, reads of them fail and the log says why.
  ASSERT_TRUE(node.Mount({"ro"})) << node.log();
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  size_t unreadable = 0;
  for (const auto& [path, content] : files) {
    const int fd = open(node.Path(path).c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
    std::string buf(1 << 20, '\0');
    ssize_t n;
    while ((n = read(fd, buf.data(), buf.size())) > 0) {
    }
    if (n < 0) {
      EXPECT_EQ(errno, EIO) << path;
      ++unreadable;
    }
    close(fd);
  }
  EXPECT_GT(unreadable, 0u) << "every file reads without the image: the test proves nothing";
  ASSERT_EQ(node.Unmount(), 0) << node.log();
  EXPECT_NE(node.log().find("mount the store with its -o tier= (read-only too)"), std::string::npos) << node.log();
  const std::vector<std::string> read_only = {"ro", "tier=" + Spec(image), "ceph_conf=" + CephCluster::Conf(),
                                              "rados_timeout=10"};
  ASSERT_TRUE(node.Mount(read_only)) << node.log();
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  ExpectFiles(node, files);
  EXPECT_GT(StoreFigure(node, "remote_reads"), 0u);
  EXPECT_EQ(StoreFigure(node, "read_errors"), 0u);
  // It drains nothing, so there is nothing to wait for, and the tool says so.
  CommandOutput wait = Capture(Tool() + " wait " + Q(node.mountpoint()) + " 2>&1");
  EXPECT_NE(wait.rc, 0) << wait.out;
  EXPECT_NE(wait.out.find("does not drain to RADOS"), std::string::npos) << wait.out;
  ASSERT_EQ(node.Unmount(), 0) << node.log();
  EXPECT_FALSE(node.Mount({"ro", "tier=" + Spec(Image("never-drained")), "ceph_conf=" + CephCluster::Conf(),
                           "rados_timeout=10"}));
  EXPECT_NE(node.log().find("holds no image"), std::string::npos) << node.log();
  ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  ExpectFiles(node, files);
  EXPECT_GT(StoreFigure(node, "remote_reads"), 0u);
  // Killed right after more is evicted: the next daemon still reads it all.
  Files more = WriteCheckpoint(node, "step6", 20 << 20, 6);
  files.insert(more.begin(), more.end());
  node.Kill();
  ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
  ExpectFiles(node, files);
  ASSERT_EQ(Wait(node), 0) << node.log();
  // The evicted runs live in this image: another one is refused.
  ASSERT_EQ(node.Unmount(), 0) << node.log();
  EXPECT_FALSE(node.Mount(TierOptions(Image("elsewhere"))));
  EXPECT_NE(node.log().find("evicted to a RADOS image"), std::string::npos) << node.log();
  ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
  // The image holds every checkpoint, evicted or not, with every checksum.
  CommandOutput image_fsck = Capture(MountedStore::BinDir() + "/ckptfs-fsck " + Spec(image) + " --ceph-conf " +
                                     CephCluster::Conf());
  EXPECT_EQ(image_fsck.rc, 0) << image_fsck.out;
  EXPECT_NE(image_fsck.out.find("evicted to the tier"), std::string::npos) << image_fsck.out;
  LoseTheNodeAndRestore(node, image, files);
  // The store is gone; the image holds the only copy of what it evicted,
  // so removing it takes --force.
  CommandOutput refused = RemoveImage(image);
  EXPECT_NE(refused.rc, 0) << refused.out;
  EXPECT_NE(refused.out.find("runs its store evicted"), std::string::npos) << refused.out;
  EXPECT_NE(ObjectsOf(image).find("manifest"), std::string::npos);
  CommandOutput forced = RemoveImage(image, "--force");
  EXPECT_EQ(forced.rc, 0) << forced.out;
  EXPECT_EQ(ObjectsOf(image), "");
}

TEST_F(TierTest, ABurstLargerThanTheDeviceWaitsForTheDrainInsteadOfFailing) {
  const std::string image = Image("burst");
  MountedStore node;
  ASSERT_EQ(node.Format("96M"), 0);
  // The drain's default hold-back during bursts: it must not hold back
  // while the store is short of the room only draining can make.
  ASSERT_TRUE(node.Mount({"tier=" + Spec(image), "ceph_conf=" + CephCluster::Conf(), "rados_timeout=10"}))
      << node.log();
  // Five checkpoints of 27 MiB back to back, no wait between them: the
  // store holds about 80 MiB, so writers must wait for what the drain
  // makes evictable.
  Files files;
  for (uint32_t step = 1; step <= 5; ++step) {
    Files ckpt = WriteCheckpoint(node, "burst" + std::to_string(step), 20 << 20, 40 + step);
    files.insert(ckpt.begin(), ckpt.end());
  }
  EXPECT_GT(StoreFigure(node, "evicted_segments"), 0u);
  ASSERT_EQ(Wait(node), 0) << node.log();
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  ExpectFiles(node, files);
  EXPECT_EQ(node.log().find("store full"), std::string::npos) << node.log();
  LoseTheNodeAndRestore(node, image, files);
}

TEST_F(TierTest, ARestoreWithACacheReadsRadosOnceAndNeverServesADamagedPiece) {
  MountedStore restore;
  CachedRestore r;
  ASSERT_NO_FATAL_FAILURE(PrepareCachedRestore("restore-cache", 12 << 20, restore, &r));
  const auto& [image, files, file_bytes, cache, options] = r;
  // First restart on this node: everything comes from RADOS and is kept.
  ASSERT_TRUE(restore.MountFrom(Spec(image), options)) << restore.log();
  ExpectFiles(restore, files);
  EXPECT_GE(StoreFigure(restore, "remote_read_bytes"), file_bytes);
  EXPECT_GE(StoreFigure(restore, "cache_fill_bytes"), file_bytes);
  // One mount per cache file: a second one is refused and says why.
  MountedStore other;
  EXPECT_FALSE(other.MountFrom(Spec(image), options));
  EXPECT_NE(other.log().find("in use by another mount"), std::string::npos) << other.log();
  ASSERT_EQ(restore.Unmount(), 0) << restore.log();

  // The next restart reads the same bytes from the cache, not from RADOS.
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  ASSERT_TRUE(restore.MountFrom(Spec(image), options)) << restore.log();
  ExpectFiles(restore, files);
  EXPECT_GE(StoreFigure(restore, "cache_hit_bytes"), file_bytes);
  EXPECT_LE(StoreFigure(restore, "remote_read_bytes"), file_bytes / 10);
  ASSERT_EQ(restore.Unmount(), 0) << restore.log();

  // A damaged cache file is caught by each piece's checksum: those pieces
  // come from RADOS again, and every byte read is still the checkpoint's.
  {
    std::fstream f(cache, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    for (std::streamoff at = 4096; at < static_cast<std::streamoff>(file_bytes); at += 1 << 20) {
      f.seekp(at);
      f.put('\x5a');
    }
  }
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  ASSERT_TRUE(restore.MountFrom(Spec(image), options)) << restore.log();
  ExpectFiles(restore, files);
  EXPECT_GT(StoreFigure(restore, "remote_read_bytes"), 0u);
  EXPECT_EQ(StoreFigure(restore, "read_errors"), 0u);
  ASSERT_EQ(restore.Unmount(), 0) << restore.log();
  EXPECT_NE(restore.log().find("damaged"), std::string::npos) << restore.log();
  unlink(cache.c_str());
  unlink((cache + ".index").c_str());

  // A cache given a size stops growing there and keeps serving what it has.
  ASSERT_GT(file_bytes, 8u << 20) << "the checkpoint fits the bound: the test proves nothing";
  std::vector<std::string> bounded = options;
  bounded.push_back("cache_size=4M");
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  ASSERT_TRUE(restore.MountFrom(Spec(image), bounded)) << restore.log();
  ExpectFiles(restore, files);
  const uint64_t kept = StoreFigure(restore, "cache_fill_bytes");
  EXPECT_GT(kept, 0u);
  EXPECT_LE(kept, 4u << 20);
  ASSERT_EQ(restore.Unmount(), 0) << restore.log();
  EXPECT_NE(restore.log().find("reached its size"), std::string::npos) << restore.log();
  struct stat st {};
  ASSERT_EQ(stat(cache.c_str(), &st), 0);
  EXPECT_LE(static_cast<uint64_t>(st.st_size), 4u << 20);
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  ASSERT_TRUE(restore.MountFrom(Spec(image), bounded)) << restore.log();
  ExpectFiles(restore, files);
  EXPECT_GE(StoreFigure(restore, "cache_hit_bytes"), kept / 2);
  EXPECT_EQ(StoreFigure(restore, "cache_fill_bytes"), 0u);
  EXPECT_GE(StoreFigure(restore, "remote_read_bytes"), file_bytes - kept);
  ASSERT_EQ(restore.Unmount(), 0) << restore.log();
  unlink(cache.c_str());
  unlink((cache + ".index").c_str());

  // A local store is its own cache.
  MountedStore local;
  ASSERT_EQ(local.Format("64M"), 0);
  EXPECT_FALSE(local.Mount({"cache=" + cache}));
  EXPECT_NE(local.log().find("local store needs no cache"), std::string::npos) << local.log();
}

TEST_F(TierTest, ARestoreCacheKeepsWhatItSavedWhenItsDaemonIsKilled) {
  MountedStore restore;
  CachedRestore r;
  ASSERT_NO_FATAL_FAILURE(PrepareCachedRestore("killed-cache", 72 << 20, restore, &r));
  const auto& [image, files, file_bytes, cache, options] = r;
  ASSERT_TRUE(restore.MountFrom(Spec(image), options)) << restore.log();
  ExpectFiles(restore, files);
  ASSERT_GE(StoreFigure(restore, "cache_fill_bytes"), 64u << 20) << "no save was due: the test proves nothing";
  // No unmount, no final save: the index saved on the way is what is left.
  restore.Kill();
  ASSERT_EQ(MountedStore::Run("echo 3 > /proc/sys/vm/drop_caches"), 0);
  ASSERT_TRUE(restore.MountFrom(Spec(image), options)) << restore.log();
  ExpectFiles(restore, files);
  EXPECT_GE(StoreFigure(restore, "cache_hit_bytes"), 60u << 20);
  EXPECT_LE(StoreFigure(restore, "remote_read_bytes"), file_bytes - (60u << 20));
  EXPECT_EQ(StoreFigure(restore, "read_errors"), 0u);
  ASSERT_EQ(restore.Unmount(), 0) << restore.log();
  unlink(cache.c_str());
  unlink((cache + ".index").c_str());
}

TEST_F(TierTest, ASecondWriterIsRefusedAndTakeoverBreaksADeadWritersLock) {
  const std::string image = Image("writers");
  MountedStore first, second;
  ASSERT_NO_FATAL_FAILURE(TwoStoresTheFirstDrained(image, first, second, 1 << 20, 3));

  EXPECT_FALSE(second.Mount(TierOptions(image)));
  EXPECT_NE(second.log().find("has another writer"), std::string::npos) << second.log();
  EXPECT_NE(second.log().find("ckptfs-tier takeover " + Spec(image)), std::string::npos) << second.log();

  // The writer dies with its lock held; the operator breaks it.
  first.Kill();
  CommandOutput out = Capture(Tool() + " takeover " + Spec(image) + " --ceph-conf " + CephCluster::Conf());
  EXPECT_EQ(out.rc, 0) << out.out;
  EXPECT_NE(out.out.find("broke the lock"), std::string::npos) << out.out;
  // The image still holds the first store: another store may not write it.
  EXPECT_FALSE(second.Mount(TierOptions(image)));
  EXPECT_NE(second.log().find("holds the image of another store"), std::string::npos) << second.log();
  // Its own store may, and finds its image intact.
  ASSERT_TRUE(first.Mount(TierOptions(image))) << first.log();
  EXPECT_EQ(Wait(first), 0);
  EXPECT_EQ(first.Unmount(), 0);
}

TEST_F(TierTest, RemoveDeletesAnImageNoWriterHoldsSoAnotherStoreMayTakeItsName) {
  const std::string image = Image("removed");
  MountedStore first, second;
  ASSERT_NO_FATAL_FAILURE(TwoStoresTheFirstDrained(image, first, second, 3 << 20, 5));
  const std::string drained = ObjectsOf(image);
  EXPECT_NE(drained.find("seg."), std::string::npos) << drained;

  // Its writer holds it: refused, nothing removed, and the drain goes on.
  CommandOutput refused = RemoveImage(image);
  EXPECT_NE(refused.rc, 0) << refused.out;
  EXPECT_NE(refused.out.find("has a writer"), std::string::npos) << refused.out;
  EXPECT_EQ(ObjectsOf(image), drained);
  WriteCheckpoint(first, "b", 1 << 20, 6);
  ASSERT_EQ(Wait(first), 0) << first.log();
  ASSERT_EQ(first.Unmount(), 0) << first.log();

  // Another store may not drain into the name while the image is there...
  EXPECT_FALSE(second.Mount(TierOptions(image)));
  EXPECT_NE(second.log().find("holds the image of another store"), std::string::npos) << second.log();
  CommandOutput removed = RemoveImage(image);
  EXPECT_EQ(removed.rc, 0) << removed.out;
  EXPECT_NE(removed.out.find("removed"), std::string::npos) << removed.out;
  EXPECT_EQ(ObjectsOf(image), "");
  MountedStore restore;
  EXPECT_FALSE(restore.MountFrom(Spec(image), {"ceph_conf=" + CephCluster::Conf()}));
  CommandOutput again = RemoveImage(image);
  EXPECT_NE(again.rc, 0) << again.out;
  EXPECT_NE(again.out.find("holds no objects"), std::string::npos) << again.out;
  // ...and may once it is gone; a restore then finds that store's files.
  ASSERT_TRUE(second.Mount(TierOptions(image))) << second.log();
  Files files = WriteCheckpoint(second, "c", 2 << 20, 7);
  ASSERT_EQ(Wait(second), 0) << second.log();
  ASSERT_EQ(second.Unmount(), 0) << second.log();
  ASSERT_TRUE(restore.MountFrom(Spec(image), {"ceph_conf=" + CephCluster::Conf()})) << restore.log();
  ExpectFiles(restore, files);
  struct stat st;
  EXPECT_NE(stat(restore.Path("a").c_str(), &st), 0) << "the removed image's files came back";
  EXPECT_EQ(restore.Unmount(), 0) << restore.log();
}

TEST_F(TierTest, RemoveLeavesANamespaceOfObjectsCkptfsDoesNotMake) {
  const std::string image = Image("foreign");
  const std::string put = "rados -c " + CephCluster::Conf() + " -p " + CephCluster::kPool + " -N " + Q(image) +
                          " put ";
  ASSERT_EQ(MountedStore::Run(put + "manifest /etc/hostname"), 0);
  ASSERT_EQ(MountedStore::Run(put + "notes.txt /etc/hostname"), 0);
  CommandOutput refused = RemoveImage(image);
  EXPECT_NE(refused.rc, 0) << refused.out;
  EXPECT_NE(refused.out.find("ckptfs does not make (notes.txt)"), std::string::npos) << refused.out;
  const std::string left = ObjectsOf(image);
  EXPECT_NE(left.find("manifest"), std::string::npos) << left;
  EXPECT_NE(left.find("notes.txt"), std::string::npos) << left;
  // Not even --force takes another application's objects.
  EXPECT_NE(RemoveImage(image, "--force").rc, 0);
  EXPECT_NE(ObjectsOf(image).find("notes.txt"), std::string::npos);
}

TEST_F(TierTest, TakeoverFencesAWriterThatWasOnlyHungSoItWritesTheImageNoMore) {
  const std::string image = Image("fenced");
  MountedStore node;
  ASSERT_EQ(node.Format("1G"), 0);
  std::vector<std::string> options = TierOptions(image);
  options.push_back("unmount_drain=5");
  ASSERT_TRUE(node.Mount(options)) << node.log();
  Files files = WriteCheckpoint(node, "step1", 4 << 20, 51);
  ASSERT_EQ(Wait(node), 0) << node.log();

  // The writer hangs, looks dead, and the operator takes its image over.
  ASSERT_EQ(kill(node.daemon_pid(), SIGSTOP), 0);
  CommandOutput out = Capture(Tool() + " takeover " + Spec(image) + " --ceph-conf " + CephCluster::Conf());
  kill(node.daemon_pid(), SIGCONT);
  EXPECT_EQ(out.rc, 0) << out.out;
  EXPECT_NE(out.out.find("fenced client."), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("broke the lock"), std::string::npos) << out.out;

  // It wakes up and takes another checkpoint: kept locally, never drained.
  Files more = WriteCheckpoint(node, "step2", 4 << 20, 52);
  EXPECT_NE(Wait(node, 30), 0) << "a fenced writer's drain must not reach RADOS";
  // Its drain learns why: at once, or after a call that timed out while
  // the OSDs dropped what it sent.
  std::string status;
  EXPECT_TRUE(WaitFor(
      [&] {
        status = Capture(Tool() + " status --json " + Q(node.mountpoint())).out;
        return status.find("fenced off the cluster") != std::string::npos;
      },
      90, std::chrono::milliseconds(500)))
      << status;
  EXPECT_EQ(TierFigure(node, "fenced"), 1u);
  // Prometheus sees it too (read by the reference parser): the drain
  // failing and why, fenced, and how far behind.
  CommandOutput prom = Capture(MountedStore::BinDir() + "/ckptfs-stat --prometheus " + Q(node.mountpoint()) +
                               " | /usr/bin/python3 " + CKPTFS_SOURCE_DIR + "/tests/integration/data/parse_prometheus.py");
  ASSERT_EQ(prom.rc, 0) << prom.out;
  const nlohmann::json metrics = nlohmann::json::parse(prom.out);
  EXPECT_EQ(metrics["types"]["ckptfs_tier_behind_seconds"], "gauge");
  EXPECT_EQ(metrics["types"]["ckptfs_tier_uploaded_bytes"], "counter");
  bool failing = false, fenced = false, error_named = false, behind = false;
  for (const auto& sample : metrics["samples"]) {
    const std::string name = sample[0];
    failing |= name == "ckptfs_tier_failing" && sample[2] == 1;
    fenced |= name == "ckptfs_tier_fenced" && sample[2] == 1;
    behind |= name == "ckptfs_tier_behind_seconds" && sample[2].get<double>() > 0;
    error_named |= name == "ckptfs_tier_last_error_info" &&
                   sample[1]["error"].get<std::string>().find("fenced off the cluster") != std::string::npos;
  }
  EXPECT_TRUE(failing && fenced && error_named && behind) << prom.out;
  // Then a wait says so at once instead of waiting out its time.
  const auto asked = std::chrono::steady_clock::now();
  EXPECT_NE(Wait(node, 60), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(30));
  ExpectFiles(node, more);
  // It stops with step2 on this node only, and its exit status says so
  // (kExitNotDrained), as does its log.
  EXPECT_EQ(node.Unmount(), 4) << node.log();
  EXPECT_NE(node.log().find("stopped with commits not yet in " + Spec(image)), std::string::npos) << node.log();

  // The image is what it held when it was taken over.
  MountedStore elsewhere;
  ASSERT_TRUE(elsewhere.MountFrom(Spec(image), {"ceph_conf=" + CephCluster::Conf()})) << elsewhere.log();
  ExpectFiles(elsewhere, files);
  EXPECT_NE(access(elsewhere.Path("step2").c_str(), F_OK), 0);
  EXPECT_EQ(elsewhere.Unmount(), 0) << elsewhere.log();
  // A new daemon of the store is a new client: it drains again.
  ASSERT_TRUE(node.Mount(options)) << node.log();
  EXPECT_EQ(Wait(node), 0) << node.log();
  EXPECT_EQ(node.Unmount(), 0) << node.log();
  EXPECT_EQ(CephCluster::Ceph("osd blocklist clear"), 0);
}

TEST_F(TierTest, AnUnreachableClusterOrAMissingPoolFailsTheMountWithTheReason) {
  MountedStore node;
  ASSERT_EQ(node.Format("1G"), 0);
  // A copy of the cluster's configuration whose monitor is nowhere.
  const std::string bad_conf = node.dir() + "/nowhere.conf";
  ASSERT_EQ(MountedStore::Run("sed -E 's/^(\\s*mon[ _]host\\s*=).*/\\1 127.0.0.1:1/' " + CephCluster::Conf() +
                              " > " + bad_conf),
            0);
  EXPECT_FALSE(node.Mount({"tier=" + Spec("x"), "ceph_conf=" + bad_conf, "rados_timeout=3"}));
  EXPECT_NE(node.log().find("cannot reach the Ceph cluster"), std::string::npos) << node.log();
  EXPECT_FALSE(node.Mount({"tier=rados:no-such-pool/x", "ceph_conf=" + CephCluster::Conf(), "rados_timeout=10"}));
  EXPECT_NE(node.log().find("pool no-such-pool does not exist"), std::string::npos) << node.log();
  EXPECT_FALSE(node.Mount({"tier=rados:ckptfs"}));
  EXPECT_NE(node.log().find("needs a pool and an image name"), std::string::npos) << node.log();
  // The store itself is untouched and mounts without a tier.
  ASSERT_TRUE(node.Mount()) << node.log();
  EXPECT_EQ(node.Unmount(), 0);
}

TEST_F(TierTest, TwoNodesDrainAtOnceAndAThirdRestoresBoth) {
  const std::string image_a = Image("node0"), image_b = Image("node1");
  Files files_a, files_b;
  {
    MountedStore a, b;
    ASSERT_EQ(a.Format("1G"), 0);
    ASSERT_EQ(b.Format("1G"), 0);
    ASSERT_TRUE(a.Mount(TierOptions(image_a))) << a.log();
    ASSERT_TRUE(b.Mount(TierOptions(image_b))) << b.log();
    std::thread writer_a([&] { files_a = WriteCheckpoint(a, "rank0", 40 << 20, 10); });
    std::thread writer_b([&] { files_b = WriteCheckpoint(b, "rank1", 40 << 20, 20); });
    writer_a.join();
    writer_b.join();
    std::thread wait_a([&] { EXPECT_EQ(Wait(a), 0); });
    EXPECT_EQ(Wait(b), 0);
    wait_a.join();
    EXPECT_EQ(a.Unmount(), 0);
    EXPECT_EQ(b.Unmount(), 0);
  }
  MountedStore restore_a, restore_b;
  ASSERT_TRUE(restore_a.MountFrom(Spec(image_a), {"ceph_conf=" + CephCluster::Conf()})) << restore_a.log();
  ASSERT_TRUE(restore_b.MountFrom(Spec(image_b), {"ceph_conf=" + CephCluster::Conf()})) << restore_b.log();
  ExpectFiles(restore_a, files_a);
  ExpectFiles(restore_b, files_b);
  EXPECT_EQ(access(restore_a.Path("rank1").c_str(), F_OK), -1) << "each image holds its own node's store";
  EXPECT_EQ(restore_a.Unmount(), 0);
  EXPECT_EQ(restore_b.Unmount(), 0);
}


TEST_F(TierTest, AnOsdKilledDuringADrainLosesNothing) {
  // CI's cluster has 3 OSDs and a pool of size 2: one OSD may die.
  const std::string image = Image("osd");
  MountedStore node;
  ASSERT_EQ(node.Format("2G"), 0);
  ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
  Files files = WriteCheckpoint(node, "step1", 160 << 20, 31);
  ASSERT_EQ(CephCluster::Script("osd-stop", "1 --kill"), 0) << "see " << CephCluster::Dir() << "/tests.log";
  // Writes to PGs on the dead OSD wait until the monitor marks it down
  // (about 20 s); the drain's calls time out and retry meanwhile.
  Files more = WriteCheckpoint(node, "step2", 16 << 20, 32);
  files.insert(more.begin(), more.end());
  const int waited = Wait(node, 300);
  const int restarted = CephCluster::Script("osd-start", "1");
  ASSERT_EQ(waited, 0) << node.log();
  ASSERT_EQ(restarted, 0) << "see " << CephCluster::Dir() << "/tests.log";
  LoseTheNodeAndRestore(node, image, files);
}

TEST_F(TierTest, RadosStoppedAndRestartedWhileTheMountKeepsTakingCheckpoints) {
  const std::string image = Image("outage");
  MountedStore node;
  ASSERT_EQ(node.Format("2G"), 0);
  ASSERT_TRUE(node.Mount(TierOptions(image))) << node.log();
  Files files = WriteCheckpoint(node, "step1", 8 << 20, 41);
  ASSERT_EQ(Wait(node), 0) << node.log();

  ASSERT_EQ(CephCluster::Script("stop"), 0);
  // The whole cluster is gone: checkpoints still land locally, fsync and all.
  for (int step = 2; step <= 4; ++step) {
    Files more = WriteCheckpoint(node, "step" + std::to_string(step), 8 << 20, 40 + step);
    files.insert(more.begin(), more.end());
  }
  ExpectFiles(node, files);
  // The drain says it is behind and why: each call gives up after
  // rados_timeout=10 s, so the bound leaves room for a few on a slow machine.
  WaitFor([&] { return TierFigure(node, "errors") > 0; }, 120, std::chrono::milliseconds(100));
  EXPECT_GT(TierFigure(node, "errors"), 0u);
  EXPECT_LT(TierFigure(node, "drained_lsn"), TierFigure(node, "committed_lsn"));
  EXPECT_NE(Wait(node, 2), 0) << "wait must fail with a timeout while RADOS is down";

  ASSERT_EQ(CephCluster::Script("start"), 0) << "see " << CephCluster::Dir() << "/tests.log";
  ASSERT_EQ(Wait(node, 300), 0) << node.log();
  LoseTheNodeAndRestore(node, image, files);
}

}  // namespace
}  // namespace ckptfs::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new ckptfs::testing::CephCluster);
  return RUN_ALL_TESTS();
}
