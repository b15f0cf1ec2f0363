// FileSystem::Open and FileSystem::Format: how a store comes into being and
// how it is opened.
#include "ckptfs/filesystem.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>

#include "io/block_device.h"
#include "open_device.h"

namespace ckptfs {
namespace {

// Creates `path` if missing, grows a regular file to `size` and, unless
// `sparse`, allocates all of it, so the filesystem under the store can never
// refuse a segment later. A file this call created is removed if it fails.
Status PrepareBackingFile(const std::string& path, uint64_t size, bool sparse) {
  struct stat st;
  const bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed && !S_ISREG(st.st_mode)) return Status::Ok();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("create " + path, errno);
  Status s;
  struct statvfs under {};
  if (::fstat(fd, &st) != 0 || ::fstatvfs(fd, &under) != 0) {
    s = Status::IOError("stat " + path, errno);
  } else if (size == 0 && st.st_size == 0) {
    s = Status::Invalid(path + " is empty: give --size");
  } else if (size > static_cast<uint64_t>(st.st_size) &&
             ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    s = Status::IOError("grow " + path + " to " + std::to_string(size) + " bytes", errno);
  } else if (!sparse) {
    const off_t length = size ? static_cast<off_t>(size) : st.st_size;
    if (::fallocate(fd, 0, 0, length) != 0) {
      const int err = errno;
      const uint64_t room = static_cast<uint64_t>(under.f_bavail) * under.f_frsize;
      if (err == ENOSPC || err == EDQUOT) {
        s = Status::NoSpace("cannot allocate " + std::to_string(length) + " bytes for " + path +
                            ": the filesystem under it has " + std::to_string(room) +
                            " bytes free (give a smaller --size, or --sparse)");
      } else if (err != EOPNOTSUPP) {
        s = Status::IOError("allocate " + path, err);
      }
    }
  }
  ::close(fd);
  if (!s.ok() && !existed) ::unlink(path.c_str());
  return s;
}

}  // namespace

Result<std::unique_ptr<FileSystem>> FileSystem::Open(const std::string& path,
                                                     const MountOptions& options) {
  DeviceOptions device_options;
  device_options.direct_io = options.direct_io;
  device_options.use_uring = options.use_uring;
  CKPTFS_ASSIGN_OR_RETURN(auto device, OpenDevice(path, device_options));
  auto fs = OpenFileSystemOnDevice(std::move(device), options);
  if (!fs.ok()) return fs.status().WithContext(path);
  return fs;
}

Status FileSystem::Format(const std::string& path, const FormatOptions& options) {
  CKPTFS_RETURN_IF_ERROR(ValidateFormatOptions(options));
  CKPTFS_RETURN_IF_ERROR(PrepareBackingFile(path, options.size, options.sparse));
  DeviceOptions device_options;
  device_options.use_uring = false;
  CKPTFS_ASSIGN_OR_RETURN(auto device, OpenDevice(path, device_options));
  return FormatDevice(device.get(), options).WithContext(path);
}

}  // namespace ckptfs
