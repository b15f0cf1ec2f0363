// FileSystem::Open and FileSystem::Format: how a store comes into being and
// how it is opened.
#include "ckptfs/filesystem.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "format/superblock.h"
#include "io/block_device.h"
#include "open_device.h"
#include "util/aligned_buffer.h"

namespace ckptfs {
namespace {

// The backing file as mkfs found it, so a format that fails leaves it so:
// removed if mkfs created it, cut back if mkfs grew it.
class BackingFile {
 public:
  // Creates `path` if missing and grows a regular file to `size` (a block
  // device is left as it is).
  static Result<BackingFile> Prepare(const std::string& path, uint64_t size) {
    BackingFile file;
    file.path_ = path;
    struct stat st;
    const bool existed = ::stat(path.c_str(), &st) == 0;
    if (existed && !S_ISREG(st.st_mode)) return file;
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return Status::IOError("create " + path, errno);
    file.created_ = !existed;
    Status s;
    if (::fstat(fd, &st) != 0) {
      s = Status::IOError("stat " + path, errno);
    } else if (size == 0 && st.st_size == 0) {
      s = Status::Invalid(path + " is empty: give --size");
    } else if (size > static_cast<uint64_t>(st.st_size)) {
      file.grown_from_ = st.st_size;
      if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        s = Status::IOError("grow " + path + " to " + std::to_string(size) + " bytes", errno);
      }
    }
    ::close(fd);
    if (!s.ok()) {
      file.Undo();
      return s;
    }
    return file;
  }

  // Puts the file back as Prepare found it.
  void Undo() {
    if (created_) {
      ::unlink(path_.c_str());
    } else if (grown_from_ >= 0) {
      // The format's error is the one to report; one here would only add to it.
      [[maybe_unused]] const int rc = ::truncate(path_.c_str(), grown_from_);
    }
  }

 private:
  std::string path_;
  bool created_ = false;
  off_t grown_from_ = -1;  // its size before, when Prepare grew it
};

// Refuses, unless `force`, a path that holds a store already, before
// anything about it changes.
Status RefuseExistingStore(const std::string& path, bool force) {
  struct stat st;
  if (force || ::stat(path.c_str(), &st) != 0) return Status::Ok();
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) < kBlockSize) return Status::Ok();
  DeviceOptions read_only;
  read_only.use_uring = false;
  read_only.read_only = true;
  CKPTFS_ASSIGN_OR_RETURN(auto device, OpenDevice(path, read_only));
  if (ReadSuperblock(device.get()).ok()) {
    return Status::Exists(path + " already holds a ckptfs store; use --force to overwrite it");
  }
  return Status::Ok();
}

// Allocates the first `length` bytes of the store (BlockDevice::Provision),
// so the filesystem under it can never refuse a segment later; says how
// much room there is when it cannot.
Status AllocateStore(BlockDevice* device, const std::string& path, uint64_t length) {
  // The room before: a failed allocation may have taken all of it.
  struct statvfs under {};
  const uint64_t room =
      ::statvfs(path.c_str(), &under) == 0 ? static_cast<uint64_t>(under.f_bavail) * under.f_frsize : 0;
  Status s = device->Provision(0, length);
  if (!s.IsNoSpace()) return s;
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
  CKPTFS_RETURN_IF_ERROR(RefuseExistingStore(path, options.force));
  CKPTFS_ASSIGN_OR_RETURN(BackingFile backing, BackingFile::Prepare(path, options.size));
  Status s = [&]() -> Status {
    DeviceOptions device_options;
    device_options.use_uring = false;
    CKPTFS_ASSIGN_OR_RETURN(auto device, OpenDevice(path, device_options));
    if (!options.sparse) {
      const uint64_t length = options.size ? std::min(options.size, device->size()) : device->size();
      CKPTFS_RETURN_IF_ERROR(AllocateStore(device.get(), path, length));
    }
    return FormatDevice(device.get(), options).WithContext(path);
  }();
  if (!s.ok()) backing.Undo();
  return s;
}

}  // namespace ckptfs
