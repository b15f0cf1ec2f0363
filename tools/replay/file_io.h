// Thin POSIX file helpers returning Status: an owning descriptor, full-length
// reads and writes that retry short transfers, mkdir -p, unlink, rename.
// Everything takes absolute (or cwd-relative) paths; callers join with the run dir.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "ckptfs/status.h"

namespace ckptfs::replay {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();
  // Closes now and reports the error close() may carry (NFS, FUSE).
  Status Close(const std::string& path);

 private:
  int fd_ = -1;
};

enum class OpenMode { kCreateTruncate, kCreateKeep, kRead };
Result<UniqueFd> OpenFile(const std::string& path, OpenMode mode);

// Sequential write at the current position, or positional when offset >= 0.
Status WriteAll(int fd, std::span<const std::byte> data, const std::string& path);
Status PwriteAll(int fd, std::span<const std::byte> data, uint64_t offset, const std::string& path);
// Reads exactly data.size() bytes unless EOF comes first; returns bytes read.
Result<size_t> PreadFull(int fd, std::span<std::byte> data, uint64_t offset, const std::string& path);
Status Fsync(int fd, const std::string& path);

Status MakeDirectories(const std::string& path);
Status RemoveFile(const std::string& path);
// Removes an empty directory; a missing one is not an error, one that still
// holds entries is NotEmpty.
Status RemoveEmptyDirectory(const std::string& path);
Status RenamePath(const std::string& from, const std::string& to);

std::string JoinPath(const std::string& dir, const std::string& relative);
std::string ParentDirectory(const std::string& path);

}  // namespace ckptfs::replay
