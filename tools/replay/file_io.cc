// EINTR and short transfers are retried here so callers see one outcome per
// call; every error names the path so a failed run says which file broke.
#include "file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace ckptfs::replay {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

int UniqueFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

Status UniqueFd::Close(const std::string& path) {
  int fd = Release();
  if (fd < 0) return Status::Ok();
  if (::close(fd) != 0) return Status::IOError("close " + path, errno);
  return Status::Ok();
}

Result<UniqueFd> OpenFile(const std::string& path, OpenMode mode) {
  int flags = O_CLOEXEC;
  switch (mode) {
    case OpenMode::kCreateTruncate: flags |= O_WRONLY | O_CREAT | O_TRUNC; break;
    case OpenMode::kCreateKeep: flags |= O_RDWR | O_CREAT; break;
    case OpenMode::kRead: flags |= O_RDONLY; break;
  }
  int fd;
  do {
    fd = ::open(path.c_str(), flags, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("open " + path);
    return Status::IOError("open " + path, errno);
  }
  return UniqueFd(fd);
}

Status WriteAll(int fd, std::span<const std::byte> data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("write " + path, errno);
    }
    data = data.subspan(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status PwriteAll(int fd, std::span<const std::byte> data, uint64_t offset, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("pwrite " + path, errno);
    }
    data = data.subspan(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Result<size_t> PreadFull(int fd, std::span<std::byte> data, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pread(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("read " + path, errno);
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

Status Fsync(int fd, const std::string& path) {
  if (::fsync(fd) != 0) return Status::IOError("fsync " + path, errno);
  return Status::Ok();
}

Status MakeDirectories(const std::string& path) {
  if (path.empty()) return Status::Ok();
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::IOError("mkdir " + partial, errno);
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Status::IOError("stat " + path, errno);
  if (!S_ISDIR(st.st_mode)) return Status::NotDirectory(path);
  return Status::Ok();
}

Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return Status::NotFound("unlink " + path);
    return Status::IOError("unlink " + path, errno);
  }
  return Status::Ok();
}

Status RemoveEmptyDirectory(const std::string& path) {
  if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return Status::Ok();
  if (errno == ENOTEMPTY || errno == EEXIST) return Status::NotEmpty("rmdir " + path);
  return Status::IOError("rmdir " + path, errno);
}

Status RenamePath(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return Status::IOError("rename " + from + " -> " + to, errno);
  }
  return Status::Ok();
}

std::string JoinPath(const std::string& dir, const std::string& relative) {
  if (relative.empty()) return dir;
  if (dir.empty()) return relative;
  if (dir.back() == '/') return dir + relative;
  return dir + "/" + relative;
}

std::string ParentDirectory(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}


}  // namespace ckptfs::replay
