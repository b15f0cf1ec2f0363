// RadosImageDevice: a read-only BlockDevice that serves a store's image in
// RADOS, so the ordinary mount code (replay, checksummed reads) opens a
// drained store on any node. The manifest is read once, at Open: the device
// shows that commit for as long as it is open, whatever the writer publishes
// later (objects a newer manifest drops stay in RADOS for the writer's
// grace period; see drainer.h).
//
// Reads of the superblock area return the image's superblock (for both
// copies), reads of a listed chunk come from its object, everything else is
// zeros: that is the device the manifest describes. Remote addresses (runs
// the store had evicted to the image, format/physical_extent.h) are served
// from the object they name. A read is one RADOS read per stretch of
// adjacent chunks in an object, all issued in parallel.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "image_cache.h"
#include "image_manifest.h"
#include "io/block_device.h"
#include "rados_image.h"

namespace ckptfs {

class RadosImageDevice : public BlockDevice {
 public:
  // NotFound when the image has no manifest (never drained).
  static Result<std::unique_ptr<RadosImageDevice>> Open(std::unique_ptr<RadosImage> image);

  Status Read(uint64_t offset, void* buf, size_t len) override;
  // Lends the bytes of a range that one read of one object returns whole
  // (chunks end to end, no zeros between), in the reply's own memory, with
  // the checksum the messenger kept: a restore then copies and checksums no
  // byte of its own before handing it to the kernel. Other ranges are left
  // to Read.
  Result<LentBytes> ReadLent(uint64_t offset, size_t len) override;
  Status Write(uint64_t offset, const void* buf, size_t len) override;
  Status Flush() override;
  uint64_t size() const override { return device_size_; }
  Status Provision(uint64_t offset, uint64_t len) override;
  // Runs the store had evicted when the image was published are in it.
  bool ServesRemoteRuns() const override { return true; }
  RemoteReadCounters remote_counters() const override;

  // Keeps what is read from RADOS in the cache file at `path`, locked and
  // open as `fd` (ImageCache::LockFile; owned from now on), up to
  // `max_bytes` of it (0: no bound), and serves it from there the next
  // time. Before the first read.
  Status AttachCache(const std::string& path, int fd, uint64_t max_bytes);

  const ImageManifest& manifest() const { return manifest_; }
  // The store the image is of (its superblock's id).
  uint64_t store_id() const { return store_id_; }

 private:
  RadosImageDevice(std::unique_ptr<RadosImage> image, ImageManifest manifest, uint64_t store_id,
                   uint64_t data_start, uint64_t segment_size, uint64_t device_size);
  Status ReadOnly() const;
  // A read of one chunk's bytes from RADOS, in flight.
  struct Fetch {
    std::unique_ptr<RadosImage::Op> op;
    uint64_t object;
    uint64_t offset;
    char* dst;
    size_t length;
  };
  // Fills out[0, hi - lo) with the bytes [lo, hi) of the segment `entry`
  // names (null: none, all zeros): its chunks from the cache or by reads it
  // starts, one per stretch of adjacent chunks, and zeros between them.
  void StartChunkReads(const ImageSegment* entry, uint64_t lo, uint64_t hi, char* out,
                       std::vector<Fetch>* fetches);
  // The object holding [offset, offset + len) of the device and where in it
  // the range starts, when one read of it returns the range whole.
  struct Stretch {
    const ImageSegment* entry = nullptr;
    uint64_t offset = 0;
  };
  std::optional<Stretch> WholeStretch(uint64_t offset, size_t len) const;
  // Waits for every read, adding what arrived to the cache; the first failure.
  Status WaitAll(std::vector<Fetch>* fetches);

  const std::unique_ptr<RadosImage> image_;
  const ImageManifest manifest_;
  const uint64_t store_id_;
  const uint64_t data_start_;
  const uint64_t segment_size_;
  const uint64_t device_size_;
  std::unique_ptr<ImageCache> cache_;  // set by AttachCache, before reads
  std::atomic<uint64_t> reads_{0};
  std::atomic<uint64_t> read_bytes_{0};
};

}  // namespace ckptfs
