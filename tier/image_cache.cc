// ImageCache: see image_cache.h.
#include "image_cache.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "util/coding.h"
#include "util/crc32c.h"
#include "util/replace_file.h"

namespace ckptfs {
namespace {

constexpr char kIndexMagic[8] = {'C', 'K', 'P', 'T', 'C', 'I', 'D', 'X'};
constexpr uint32_t kIndexVersion = 1;
constexpr uint64_t kPieceAlign = 4096;

std::string IndexPath(const std::string& path) { return path + ".index"; }

}  // namespace

Result<int> ImageCache::LockFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("cache " + path, errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return Status::Busy("cache " + path + " is in use by another mount");
    return Status::IOError("locking cache " + path, err);
  }
  return fd;
}

namespace {

bool ReadWholeFile(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1 << 16];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  ::close(fd);
  return n == 0;
}

}  // namespace

Result<std::unique_ptr<ImageCache>> ImageCache::Open(const std::string& path, int fd, const std::string& image,
                                                     uint64_t store_id, uint64_t max_bytes) {
  std::unique_ptr<ImageCache> cache(new ImageCache(path, fd, image, store_id, max_bytes));
  MutexLock lock(&cache->mu_);
  if (!cache->LoadIndexLocked()) {
    // Nothing known about the file's bytes: start over, with no index left
    // to describe the bytes about to be overwritten.
    if (::unlink(IndexPath(path).c_str()) != 0 && errno != ENOENT) {
      return Status::IOError("removing " + IndexPath(path), errno);
    }
    if (::ftruncate(fd, 0) != 0) return Status::IOError("truncating cache " + path, errno);
  }
  cache->saved_end_ = cache->end_;
  spdlog::info("cache {}: {} pieces, {} bytes kept from earlier mounts", path, cache->pieces_.size(),
               cache->end_);
  return cache;
}

ImageCache::~ImageCache() {
  Status s = Close();
  if (!s.ok()) spdlog::warn("cache {}: {}", path_, s.ToString());
  ::close(fd_);
}

bool ImageCache::LoadIndexLocked() {
  std::string data;
  if (!ReadWholeFile(IndexPath(path_), &data)) return false;
  if (data.size() < sizeof kIndexMagic + 4 || std::memcmp(data.data(), kIndexMagic, sizeof kIndexMagic) != 0 ||
      crc32c::Value(data.data(), data.size() - 4) != DecodeFixed32(data.data() + data.size() - 4)) {
    spdlog::warn("cache {}: its index is damaged; starting empty", path_);
    return false;
  }
  Decoder d(std::string_view(data).substr(sizeof kIndexMagic, data.size() - sizeof kIndexMagic - 4));
  uint32_t version = 0, count = 0;
  std::string image;
  uint64_t store_id = 0, end = 0;
  if (!d.U32(&version) || version != kIndexVersion || !d.Bytes(&image) || !d.U64(&store_id) ||
      !d.U64(&end) || !d.U32(&count)) {
    spdlog::warn("cache {}: an index this version cannot read; starting empty", path_);
    return false;
  }
  if (image != image_ || store_id != store_id_) {
    spdlog::info("cache {} held {}; starting empty for {}", path_, image, image_);
    return false;
  }
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t object = 0, offset = 0;
    Piece p;
    if (!d.U64(&object) || !d.U64(&offset) || !d.U32(&p.length) || !d.U64(&p.file_offset) || !d.U32(&p.crc)) {
      pieces_.clear();
      return false;
    }
    pieces_[{object, offset}] = p;
  }
  end_ = end;
  return true;
}

std::string ImageCache::EncodeIndexLocked() const {
  std::string out(kIndexMagic, sizeof kIndexMagic);
  Encoder e(&out);
  e.U32(kIndexVersion);
  e.Bytes(image_);
  e.U64(store_id_);
  e.U64(end_);
  e.U32(static_cast<uint32_t>(pieces_.size()));
  for (const auto& [key, p] : pieces_) {
    e.U64(key.first);
    e.U64(key.second);
    e.U32(p.length);
    e.U64(p.file_offset);
    e.U32(p.crc);
  }
  e.U32(crc32c::Value(out.data(), out.size()));
  return out;
}

std::optional<ImageCache::Hit> ImageCache::Find(uint64_t object, uint64_t offset, size_t len) {
  Key key;
  Piece piece;
  {
    MutexLock lock(&mu_);
    // The piece starting at or before `offset` in this object.
    auto it = pieces_.upper_bound({object, offset});
    if (it == pieces_.begin()) return std::nullopt;
    --it;
    key = it->first;
    piece = it->second;
    if (key.first != object || key.second + piece.length < offset + len) return std::nullopt;
  }
  // The whole piece, so its checksum can be checked.
  auto bytes = std::make_shared<std::string>(piece.length, '\0');
  const ssize_t n = ::pread(fd_, bytes->data(), piece.length, static_cast<off_t>(piece.file_offset));
  if (n != static_cast<ssize_t>(piece.length) || crc32c::Value(bytes->data(), bytes->size()) != piece.crc) {
    spdlog::warn("cache {}: piece of object {} at {} is damaged; reading it from RADOS", path_, object,
                 key.second);
    MutexLock lock(&mu_);
    pieces_.erase(key);
    return std::nullopt;
  }
  hit_bytes_.fetch_add(len, std::memory_order_relaxed);
  return Hit{std::move(bytes), static_cast<size_t>(offset - key.second)};
}

bool ImageCache::Read(uint64_t object, uint64_t offset, char* buf, size_t len) {
  std::optional<Hit> hit = Find(object, offset, len);
  if (!hit) return false;
  std::memcpy(buf, hit->piece->data() + hit->at, len);
  return true;
}

void ImageCache::Insert(uint64_t object, uint64_t offset, const char* data, size_t len,
                        std::optional<uint32_t> crc) {
  uint64_t at;
  {
    MutexLock lock(&mu_);
    // A piece already kept from here stays, unless this one is longer.
    if (full_ || closed_) return;
    if (auto it = pieces_.find({object, offset}); it != pieces_.end() && it->second.length >= len) return;
    const uint64_t size = (len + kPieceAlign - 1) / kPieceAlign * kPieceAlign;
    if (max_bytes_ != 0 && end_ + size > max_bytes_) {
      spdlog::info("cache {}: reached its size ({} bytes, cache_size=); it keeps what it has", path_, end_);
      full_ = true;
      return;
    }
    at = end_;
    end_ += size;
  }
  const ssize_t n = ::pwrite(fd_, data, len, static_cast<off_t>(at));
  MutexLock lock(&mu_);
  if (n != static_cast<ssize_t>(len)) {
    if (!full_) spdlog::warn("cache {}: cannot add to it ({}); it keeps what it has", path_,
                             n < 0 ? std::strerror(errno) : "short write");
    full_ = true;
    return;
  }
  pieces_[{object, offset}] = Piece{static_cast<uint32_t>(len), at, crc ? *crc : crc32c::Value(data, len)};
  fill_bytes_.fetch_add(len, std::memory_order_relaxed);
  if (saving_ || end_ - saved_end_ < std::max(kSaveEveryBytes, saved_end_ / 8)) return;
  saving_ = true;
  lock.Unlock();
  Status saved;
  {
    MutexLock one_save(&save_mu_);
    saved = SaveIndex();
  }
  if (!saved.ok()) spdlog::warn("cache {}: {}", path_, saved.ToString());
  lock.Lock();
  saving_ = false;
}

Status ImageCache::Close() {
  MutexLock one_save(&save_mu_);
  {
    MutexLock lock(&mu_);
    if (closed_) return Status::Ok();
    closed_ = true;
  }
  return SaveIndex();
}

Status ImageCache::SaveIndex() {
  std::string index;
  {
    MutexLock lock(&mu_);
    index = EncodeIndexLocked();
    saved_end_ = end_;
  }
  // Every piece the index lists was written before it was encoded: synced
  // now, they are on disk before the index that names them.
  if (::fdatasync(fd_) != 0) return Status::IOError("syncing cache " + path_, errno);
  return ReplaceFile(IndexPath(path_), index, 0600, /*durable=*/true)
      .WithContext("saving the index of cache " + path_);
}

}  // namespace ckptfs
