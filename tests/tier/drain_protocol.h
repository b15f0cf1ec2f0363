// What the drain protocol's tests share: the store side (ScriptedSegment,
// one data segment in memory), where the images live (ImageBackend: a
// MemoryCluster, or the real cluster) and the fixture that opens drainers
// on them (DrainerTest, value-parameterized by backend). The tests are in
// drain_protocol_test.cc; drainer_memory_test.cc and
// drainer_cluster_test.cc instantiate them, each with the cases only its
// backend can make.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ckptfs/committed_image.h"
#include "drainer.h"
#include "image_manifest.h"
#include "published_manifest.h"
#include "rados_image.h"
#include "util/mutex.h"

namespace ckptfs::testing {

constexpr uint64_t kSegmentBytes = 8 << 20;
constexpr uint32_t kSegment = 1;
constexpr uint64_t kStoreId = 0x5eed0001;

// One data segment in memory, as the local store would capture it.
class ScriptedSegment : public CommittedImageSource {
 public:
  ScriptedSegment() : bytes_(kSegmentBytes, '\0') {}

  // The segment's state at a new commit.
  void Commit(uint64_t incarnation, std::vector<ByteRange> written, uint64_t offset, const std::string& data)
      EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    incarnation_ = incarnation;
    written_ = std::move(written);
    std::memcpy(bytes_.data() + offset, data.data(), data.size());
    ++commit_lsn_;
  }

  Result<CommittedImage> CaptureCommitted() override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    CommittedImage image;
    image.superblock.assign(4096, '\0');
    image.store_id = kStoreId;
    image.data_start = 1 << 20;
    image.segment_size = kSegmentBytes;
    image.segment_count = 4;
    image.commit_lsn = commit_lsn_;
    image.segments.push_back(SegmentImage{kSegment, incarnation_, written_});
    return image;
  }
  uint64_t CommittedLsn() const override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return commit_lsn_;
  }
  uint64_t BytesWritten() const override { return 0; }
  bool SpaceIsLow() const override { return false; }
  Result<bool> ReadSegment(uint32_t segment, uint64_t incarnation, uint64_t offset, void* buf,
                           size_t len) override EXCLUDES(mu_) {
    std::function<void()> stall;
    {
      MutexLock lock(&mu_);
      if (stall_ && offset == stall_offset_) stall = std::move(stall_);
    }
    if (stall) stall();  // without the lock: the drain's other reads go on
    MutexLock lock(&mu_);
    if (handout_ && handout_->after_reads-- == 0) {
      // Handed out again in the middle of the drain's reads.
      incarnation_ = handout_->incarnation;
      written_ = {{0, handout_->bytes.size()}};
      std::memcpy(bytes_.data(), handout_->bytes.data(), handout_->bytes.size());
      ++commit_lsn_;
      handout_.reset();
    }
    if (segment != kSegment || incarnation != incarnation_) return false;
    std::memcpy(buf, bytes_.data() + offset, len);
    return true;
  }
  // After `reads` more reads, the segment is handed out again as
  // `incarnation`, its new use writing `bytes` at its start and committing.
  void HandOutAgainAfter(int reads, uint64_t incarnation, std::string bytes) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    handout_ = Handout{reads, incarnation, std::move(bytes)};
  }
  // The next read of the piece at `offset` runs `stall` first, as a drain
  // whose process stops there would wait for it. By offset, not by count:
  // the drain reads pieces ahead on several threads, in no set order, and a
  // stall of the second piece's read let the first go out meanwhile.
  void StallAt(uint64_t offset, std::function<void()> stall) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    stall_offset_ = offset;
    stall_ = std::move(stall);
  }
  void AttachTier(RemoteTier*) override {}

 private:
  mutable Mutex mu_;
  uint64_t stall_offset_ GUARDED_BY(mu_) = 0;
  std::function<void()> stall_ GUARDED_BY(mu_);
  std::string bytes_ GUARDED_BY(mu_);
  uint64_t incarnation_ GUARDED_BY(mu_) = 0;
  std::vector<ByteRange> written_ GUARDED_BY(mu_);
  uint64_t commit_lsn_ GUARDED_BY(mu_) = 0;
  struct Handout {
    int after_reads;
    uint64_t incarnation;
    std::string bytes;
  };
  std::optional<Handout> handout_ GUARDED_BY(mu_);
};

// Where a test's images live.
class ImageBackend {
 public:
  virtual ~ImageBackend() = default;
  // An image name no other test (or earlier run) uses.
  virtual std::string UniqueImage(const std::string& stem) = 0;
  // A new client of `image`, each call its own.
  virtual Result<std::unique_ptr<RadosImage>> Open(const std::string& image, unsigned timeout_seconds) = 0;
};

// A backend for one test: its name (the instantiation's) and how to make it.
struct BackendParam {
  std::string name;
  std::function<std::unique_ptr<ImageBackend>()> make;
};
inline void PrintTo(const BackendParam& p, std::ostream* os) { *os << p.name; }

class DrainerTest : public ::testing::TestWithParam<BackendParam> {
 public:
  void SetUp() override { backend_ = GetParam().make(); }

  std::string UniqueImage(const std::string& stem) { return backend_->UniqueImage(stem); }
  Result<std::unique_ptr<RadosImage>> OpenImage(const std::string& image, unsigned timeout_seconds = 30) {
    return backend_->Open(image, timeout_seconds);
  }
  Result<std::unique_ptr<Drainer>> OpenDrainer(const std::string& image, ScriptedSegment* source,
                                               DrainOptions options = {}, uint64_t store_id = kStoreId,
                                               unsigned timeout_seconds = 30) {
    CKPTFS_ASSIGN_OR_RETURN(std::unique_ptr<RadosImage> rados, OpenImage(image, timeout_seconds));
    options.busy_bytes_per_second = 0;  // no burst to wait for
    return Drainer::Open(std::move(rados), source, store_id, options);
  }
  // OpenDrainer, and drains until the image holds the source's commit.
  Result<std::unique_ptr<Drainer>> OpenDrained(const std::string& image, ScriptedSegment* source,
                                               DrainOptions options = {}) {
    CKPTFS_ASSIGN_OR_RETURN(std::unique_ptr<Drainer> drainer, OpenDrainer(image, source, options));
    CKPTFS_RETURN_IF_ERROR(drainer->DrainUntil(0, std::chrono::seconds(60)));
    return drainer;
  }
  // The image's manifest as published, read by a client of its own.
  Result<ImageManifest> PublishedManifest(const std::string& image) {
    CKPTFS_ASSIGN_OR_RETURN(std::unique_ptr<RadosImage> admin, OpenImage(image));
    return ReadPublishedManifest(admin.get());
  }
  // Breaks the image's writer lock, as `ckptfs-tier takeover --no-fence` does.
  void BreakWriterLock(const std::string& image) {
    auto admin = OpenImage(image);
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    auto lockers = (*admin)->Lockers(ImageManifest::kLockObject, ImageManifest::kLockName);
    ASSERT_TRUE(lockers.ok() && lockers->size() == 1u);
    ASSERT_TRUE((*admin)->BreakLock(ImageManifest::kLockObject, ImageManifest::kLockName, lockers->front()).ok());
  }
  // The image's segment objects ("seg.S.N").
  std::vector<std::string> SegmentObjects(const std::string& image) {
    auto rados = OpenImage(image);
    EXPECT_TRUE(rados.ok()) << rados.status().ToString();
    if (!rados.ok()) return {};
    auto names = (*rados)->List();
    EXPECT_TRUE(names.ok()) << names.status().ToString();
    std::vector<std::string> segments;
    for (const std::string& name : names.ok() ? *names : std::vector<std::string>{}) {
      if (name.rfind("seg.", 0) == 0) segments.push_back(name);
    }
    return segments;
  }

 protected:
  std::unique_ptr<ImageBackend> backend_;
};

// A writer that takes `image` over from the one the test runs, at the
// moment the test picks (a stall of that writer's, a call of its): breaks
// the lock, opens the image for `source` and drains it, and keeps what it
// opened and how the drain went.
struct Successor {
  Successor(DrainerTest* test, std::string image, ScriptedSegment* source)
      : test(test), image(std::move(image)), source(source) {}
  void TakeOver() {
    test->BreakWriterLock(image);
    auto opened = test->OpenDrainer(image, source);
    if (!opened.ok()) {
      drained = opened.status();
      return;
    }
    drainer = std::move(*opened);
    drained = drainer->DrainUntil(0, std::chrono::seconds(60));
  }

  DrainerTest* const test;
  const std::string image;
  ScriptedSegment* const source;
  std::unique_ptr<Drainer> drainer;
  Status drained = Status::IOError("the successor never took over");
};

// The bytes of the segment the drainer's published image holds as
// `incarnation`, read back through the image; empty when it holds none.
inline std::string ReadBack(Drainer* drainer, uint64_t incarnation) {
  std::optional<RemoteSegment> held = drainer->Published(kSegment, incarnation);
  if (!held.has_value()) return "";
  std::string got(kSegmentBytes, '\0');
  Status read = drainer->ReadRemote(held->object, 0, got.data(), got.size());
  EXPECT_TRUE(read.ok()) << read.ToString();
  return read.ok() ? got : "";
}

}  // namespace ckptfs::testing
