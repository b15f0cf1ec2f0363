// FileDevice: pread/pwrite loops that finish short transfers, fdatasync as
// the durability barrier (on a block device it also flushes the disk cache).
#include "io/file_device.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>

#include "io/uring_device.h"
#include "util/aligned_buffer.h"

namespace ckptfs {

Result<std::unique_ptr<FileDevice>> FileDevice::Open(const std::string& path,
                                                     const DeviceOptions& options) {
  int flags = (options.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;
  int fd = -1;
  if (options.direct_io) {
    fd = ::open(path.c_str(), flags | O_DIRECT);
    // tmpfs and some FUSE filesystems refuse O_DIRECT; buffered I/O plus
    // fdatasync keeps the same durability contract there.
    if (fd < 0 && errno == EINVAL) fd = ::open(path.c_str(), flags);
  } else {
    fd = ::open(path.c_str(), flags);
  }
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file or device");
    return Status::IOError("open " + path, errno);
  }
  if (options.exclusive && ::flock(fd, (options.read_only ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      // A shared lock is refused only by an exclusive one: a writer.
      return Status::Busy(path + (options.read_only
                                      ? " is in use by a writer (mounted read-write, or repaired)"
                                      : " is in use (mounted, read-write or read-only, or being "
                                        "checked)"));
    }
    return Status::IOError("flock " + path, err);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::IOError("stat " + path, err);
  }
  uint64_t size = 0;
  if (S_ISBLK(st.st_mode)) {
    if (::ioctl(fd, BLKGETSIZE64, &size) != 0) {
      int err = errno;
      ::close(fd);
      return Status::IOError("BLKGETSIZE64 " + path, err);
    }
  } else if (S_ISREG(st.st_mode)) {
    size = static_cast<uint64_t>(st.st_size);
  } else {
    ::close(fd);
    return Status::Invalid(path + " is neither a regular file nor a block device");
  }
  return std::unique_ptr<FileDevice>(new FileDevice(path, fd, AlignDown(size, kBlockSize)));
}

FileDevice::~FileDevice() { ::close(fd_); }

Status FileDevice::Read(uint64_t offset, void* buf, size_t len) {
  auto* p = static_cast<char*>(buf);
  while (len > 0) {
    ssize_t n = ::pread(fd_, p, len, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("read " + path_ + " at " + std::to_string(offset), errno);
    }
    if (n == 0) return Status::IOError("read " + path_ + " past end at " + std::to_string(offset));
    p += n;
    offset += static_cast<uint64_t>(n);
    len -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status FileDevice::Write(uint64_t offset, const void* buf, size_t len) {
  const auto* p = static_cast<const char*>(buf);
  while (len > 0) {
    ssize_t n = ::pwrite(fd_, p, len, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("write " + path_ + " at " + std::to_string(offset), errno);
    }
    p += n;
    offset += static_cast<uint64_t>(n);
    len -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status FileDevice::Flush() {
  if (::fdatasync(fd_) != 0) return Status::IOError("fdatasync " + path_, errno);
  return Status::Ok();
}

Status FileDevice::Provision(uint64_t offset, uint64_t len) {
  // On blocks already allocated (a preallocated store, a segment written
  // before) this changes nothing and costs a walk of the extent tree.
  if (::fallocate(fd_, 0, static_cast<off_t>(offset), static_cast<off_t>(len)) == 0) {
    return Status::Ok();
  }
  const int err = errno;
  if (err == ENOSPC || err == EDQUOT) {
    return Status::NoSpace("the filesystem holding " + path_ + " is full");
  }
  // A block device, or a filesystem without fallocate: nothing to reserve.
  if (err == EOPNOTSUPP || err == ENODEV) return Status::Ok();
  return Status::IOError("fallocate " + path_, err);
}

uint64_t FileDevice::ProvisionShortfall() const {
  struct stat st;
  struct statvfs under;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || ::fstatvfs(fd_, &under) != 0) return 0;
  const uint64_t allocated = static_cast<uint64_t>(st.st_blocks) * 512;
  const uint64_t holes = size_ > allocated ? size_ - allocated : 0;
  const uint64_t room = static_cast<uint64_t>(under.f_bavail) * under.f_frsize;
  return holes > room ? holes - room : 0;
}

Result<std::unique_ptr<BlockDevice>> OpenDevice(const std::string& path,
                                                const DeviceOptions& options) {
  CKPTFS_ASSIGN_OR_RETURN(auto file, FileDevice::Open(path, options));
  if (options.use_uring && !options.read_only) {
    return std::unique_ptr<BlockDevice>(
        std::make_unique<UringDevice>(std::move(file), options.uring_queue_depth));
  }
  return std::unique_ptr<BlockDevice>(std::move(file));
}

}  // namespace ckptfs
