// FileSystem::Open and FileSystem::Format: how a store comes into being and
// how it is opened.
#include "ckptfs/filesystem.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "io/block_device.h"
#include "open_device.h"

namespace ckptfs {
namespace {

// Creates `path` if missing and grows a regular file to `size`; true when
// it created the file (which it removes again if it fails).
Result<bool> PrepareBackingFile(const std::string& path, uint64_t size) {
  struct stat st;
  const bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed && !S_ISREG(st.st_mode)) return false;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("create " + path, errno);
  Status s;
  if (::fstat(fd, &st) != 0) {
    s = Status::IOError("stat " + path, errno);
  } else if (size == 0 && st.st_size == 0) {
    s = Status::Invalid(path + " is empty: give --size");
  } else if (size > static_cast<uint64_t>(st.st_size) &&
             ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    s = Status::IOError("grow " + path + " to " + std::to_string(size) + " bytes", errno);
  }
  ::close(fd);
  if (!s.ok() && !existed) ::unlink(path.c_str());
  if (!s.ok()) return s;
  return !existed;
}

// Allocates the first `length` bytes of the store (BlockDevice::Provision),
// so the filesystem under it can never refuse a segment later; says how
// much room there is when it cannot.
Status AllocateStore(BlockDevice* device, const std::string& path, uint64_t length) {
  Status s = device->Provision(0, length);
  if (!s.IsNoSpace()) return s;
  struct statvfs under {};
  const uint64_t room =
      ::statvfs(path.c_str(), &under) == 0 ? static_cast<uint64_t>(under.f_bavail) * under.f_frsize : 0;
  return Status::NoSpace("cannot allocate " + std::to_string(length) + " bytes for " + path +
                         ": the filesystem under it has " + std::to_string(room) +
                         " bytes free (give a smaller --size, or --sparse)");
}

}  // namespace

Result<std::unique_ptr<FileSystem>> FileSystem::Open(const std::string& path,
                                                     const MountOptions& options) {
  DeviceOptions device_options;
  device_options.direct_io = options.direct_io;
  device_options.use_uring = options.use_uring;
  // O_RDONLY and a shared lock: read-only opens exclude a read-write one.
  device_options.read_only = options.read_only;
  CKPTFS_ASSIGN_OR_RETURN(auto device, OpenDevice(path, device_options));
  auto fs = OpenFileSystemOnDevice(std::move(device), options);
  if (!fs.ok()) return fs.status().WithContext(path);
  return fs;
}

Status FileSystem::Format(const std::string& path, const FormatOptions& options) {
  CKPTFS_RETURN_IF_ERROR(ValidateFormatOptions(options));
  CKPTFS_ASSIGN_OR_RETURN(const bool created, PrepareBackingFile(path, options.size));
  DeviceOptions device_options;
  device_options.use_uring = false;
  CKPTFS_ASSIGN_OR_RETURN(auto device, OpenDevice(path, device_options));
  if (!options.sparse) {
    const uint64_t length = options.size ? std::min(options.size, device->size()) : device->size();
    Status allocated = AllocateStore(device.get(), path, length);
    if (!allocated.ok()) {
      device.reset();
      if (created) ::unlink(path.c_str());
      return allocated;
    }
  }
  return FormatDevice(device.get(), options).WithContext(path);
}

}  // namespace ckptfs
