// ImageCache: a file on the local SSD that keeps what a read-only mount of a
// RADOS image (RadosImageDevice) read from RADOS, so the same bytes read
// again (another rank, the next restart on this node) come from the SSD.
// `ckptfs rados:POOL/NAME MNT -o cache=PATH`.
//
// What makes caching safe is the image's own rule (image_manifest.h): the
// chunks of an object, once a manifest names them, never change. So cached
// bytes are keyed by (object id, offset) and stay valid for every later
// manifest of the same image; a newer commit only adds objects.
//
// The cache file holds pieces, each 4 KiB aligned, appended and never
// rewritten. Its index lives in memory and is saved beside it, in
// PATH.index (written aside, then renamed over it), when the cache is
// closed and whenever it has grown by kSaveEveryBytes or an eighth since the
// last save, so a crash loses only what came after that. A saved index
// lists only pieces synced before it was written, and a piece it lists is
// never rewritten (what comes later is appended past the index's end), so
// an index from before a crash is still true. Every piece carries its
// CRC32C, checked on each hit: a damaged piece is dropped and read from
// RADOS again, never served. A cache that cannot grow (the filesystem under it full) stops
// taking pieces and keeps serving the ones it has, and so does one that
// reached the size it was given (-o cache_size=): pieces are never
// rewritten, so a full cache is replaced, not evicted from, by deleting it.
//
// PATH.index, little-endian: magic[8] "CKPTCIDX", version u32 (1),
// image str (u32 length + bytes: "rados:POOL/NAME"), store_id u64,
// data_end u64, count u32, then per piece: object u64, offset u64,
// length u32, file_offset u64, crc u32; crc u32 of everything before it.
//
// One mount at a time uses a cache file (flock). Thread-safe: mu_ guards
// the index and the file's end; reads and writes of pieces run outside it,
// and so do saves of the index, one at a time under save_mu_.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "ckptfs/status.h"
#include "util/mutex.h"

namespace ckptfs {

struct ImageCacheCounters {
  uint64_t hit_bytes = 0;   // served from the cache file
  uint64_t fill_bytes = 0;  // read from RADOS and added
};

class ImageCache {
 public:
  // Opens or creates the cache file at `path` and takes its lock: the
  // descriptor, for Open. Busy when another mount uses it. A daemon takes
  // it before it forks: the lock belongs to the open file, which the child
  // inherits, so no other mount can take it in between.
  static Result<int> LockFile(const std::string& path);
  // The cache in `fd` (from LockFile, now owned) at `path` for the image
  // `image` of store `store_id` (a cache of another image starts empty),
  // taking pieces until the file would pass `max_bytes` (0: no bound).
  static Result<std::unique_ptr<ImageCache>> Open(const std::string& path, int fd, const std::string& image,
                                                  uint64_t store_id, uint64_t max_bytes);
  // Saves the index (Close).
  ~ImageCache();

  // The piece holding `len` bytes at `offset` of `object`, read whole and
  // checked, and where those bytes start in it; none when no piece holds
  // them intact and the caller must read RADOS.
  struct Hit {
    std::shared_ptr<const std::string> piece;
    size_t at = 0;
  };
  std::optional<Hit> Find(uint64_t object, uint64_t offset, size_t len) EXCLUDES(mu_);
  // Find, copied into buf.
  bool Read(uint64_t object, uint64_t offset, char* buf, size_t len) EXCLUDES(mu_);
  // Adds bytes read from RADOS; `crc` is their CRC32C when the caller has it.
  void Insert(uint64_t object, uint64_t offset, const char* data, size_t len,
              std::optional<uint32_t> crc = std::nullopt) EXCLUDES(mu_);
  // Syncs the pieces and saves the index; idempotent.
  Status Close() EXCLUDES(mu_, save_mu_);

  // Growth between two saves of the index: at least this, at most an
  // eighth of the cache (so saving a large index costs little per byte).
  static constexpr uint64_t kSaveEveryBytes = 64 << 20;

  ImageCacheCounters counters() const { return {hit_bytes_.load(), fill_bytes_.load()}; }

 private:
  struct Piece {
    uint32_t length = 0;
    uint64_t file_offset = 0;
    uint32_t crc = 0;
  };
  using Key = std::pair<uint64_t, uint64_t>;  // object, offset

  ImageCache(std::string path, int fd, std::string image, uint64_t store_id, uint64_t max_bytes)
      : path_(std::move(path)), fd_(fd), image_(std::move(image)), store_id_(store_id), max_bytes_(max_bytes) {}
  // Loads PATH.index if it describes this image; false otherwise.
  bool LoadIndexLocked() REQUIRES(mu_);
  std::string EncodeIndexLocked() const REQUIRES(mu_);
  // Writes the index of the pieces kept so far, once they are synced.
  Status SaveIndex() REQUIRES(save_mu_) EXCLUDES(mu_);

  const std::string path_;
  const int fd_;
  const std::string image_;
  const uint64_t store_id_;
  const uint64_t max_bytes_;  // 0: no bound

  Mutex save_mu_ ACQUIRED_BEFORE(mu_);
  Mutex mu_;
  std::map<Key, Piece> pieces_ GUARDED_BY(mu_);
  uint64_t end_ GUARDED_BY(mu_) = 0;  // where the next piece goes
  bool full_ GUARDED_BY(mu_) = false;  // a write failed or max_bytes_ reached: take no more pieces
  bool closed_ GUARDED_BY(mu_) = false;
  bool saving_ GUARDED_BY(mu_) = false;   // an Insert is saving the index
  uint64_t saved_end_ GUARDED_BY(mu_) = 0;  // end_ when the index was last saved

  std::atomic<uint64_t> hit_bytes_{0};
  std::atomic<uint64_t> fill_bytes_{0};
};

}  // namespace ckptfs
