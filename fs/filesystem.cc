// FileSystem::Open and FileSystem::Format: how a store comes into being and
// how it is opened.
#include "ckptfs/filesystem.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "format/superblock.h"
#include "io/block_device.h"
#include "log/log_writer.h"
#include "log/record.h"
#include "log_structured_fs.h"
#include "meta/namespace.h"
#include "util/aligned_buffer.h"

namespace ckptfs {
namespace {

constexpr uint64_t kMinSegmentSize = 2ull << 20;  // must hold a 1 MiB append and a link block
constexpr uint64_t kMaxSegmentSize = 1ull << 30;
constexpr uint32_t kMinSegments = 8;

// Creates `path` if missing and grows a regular file to `size` (sparse).
Status PrepareBackingFile(const std::string& path, uint64_t size) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return Status::Ok();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("create " + path, errno);
  Status s;
  if (::fstat(fd, &st) != 0) {
    s = Status::IOError("stat " + path, errno);
  } else if (size > static_cast<uint64_t>(st.st_size) &&
             ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    s = Status::IOError("grow " + path + " to " + std::to_string(size) + " bytes", errno);
  } else if (size == 0 && st.st_size == 0) {
    s = Status::Invalid(path + " is empty: give --size");
  }
  ::close(fd);
  return s;
}

}  // namespace

Result<std::unique_ptr<FileSystem>> FileSystem::Open(const std::string& path,
                                                     const MountOptions& options) {
  DeviceOptions device_options;
  device_options.direct_io = options.direct_io;
  device_options.use_uring = options.use_uring;
  CKPTFS_ASSIGN_OR_RETURN(auto device, OpenDevice(path, device_options));
  auto sb = ReadSuperblock(device.get());
  if (!sb.ok()) return sb.status().WithContext(path);
  auto fs = std::make_unique<LogStructuredFs>(options, std::move(device), *sb);
  Status s = fs->Recover();
  if (!s.ok()) return s.WithContext(path);
  return std::unique_ptr<FileSystem>(std::move(fs));
}

Status FileSystem::Format(const std::string& path, const FormatOptions& options) {
  if (options.segment_size < kMinSegmentSize || options.segment_size > kMaxSegmentSize ||
      options.segment_size % (1 << 20) != 0) {
    return Status::Invalid("segment size must be a multiple of 1 MiB between 2 MiB and 1 GiB");
  }
  CKPTFS_RETURN_IF_ERROR(PrepareBackingFile(path, options.size));
  DeviceOptions device_options;
  device_options.use_uring = false;
  CKPTFS_ASSIGN_OR_RETURN(auto device, OpenDevice(path, device_options));
  uint64_t size = device->size();
  if (options.size != 0) size = std::min(size, AlignDown(options.size, kBlockSize));
  if (size < kDataStart + kMinSegments * options.segment_size) {
    return Status::Invalid("store too small: " + std::to_string(size) + " bytes holds fewer than " +
                           std::to_string(kMinSegments) + " segments of " +
                           std::to_string(options.segment_size) + " bytes");
  }
  if (ReadSuperblock(device.get()).ok() && !options.force) {
    return Status::Exists(path + " already holds a ckptfs store; use --force to overwrite it");
  }

  Superblock sb;
  sb.segment_size = options.segment_size;
  sb.segment_count = static_cast<uint32_t>((size - kDataStart) / options.segment_size);
  sb.data_start = kDataStart;
  sb.device_size = size;
  if (getrandom(&sb.store_id, sizeof(sb.store_id), 0) != sizeof(sb.store_id)) {
    return Status::IOError("getrandom", errno);
  }
  sb.generation = 1;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  sb.created_ns = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  sb.log_head_segment = 0;
  sb.log_head_lsn = 1;
  sb.log_head_prev_crc = static_cast<uint32_t>(sb.store_id);

  // Invalidate any old superblock first, so a crash mid-format leaves no
  // store that looks valid; the new superblock is the last thing written.
  AlignedBuffer zeros(2 * kBlockSize);
  CKPTFS_RETURN_IF_ERROR(device->Write(0, zeros.data(), zeros.size()));
  CKPTFS_RETURN_IF_ERROR(device->Flush());

  LogWriter writer(device.get(), sb,
                   LogPosition{0, 0, sb.log_head_lsn, sb.log_head_prev_crc},
                   []() -> Result<uint32_t> { return Status::NoSpace("mkfs needs one segment"); });
  std::string records;
  EncodeRecord(record::CreateInode{kRootIno, S_IFDIR | 0755, static_cast<uint32_t>(getuid()),
                                   static_cast<uint32_t>(getgid()), 0, sb.created_ns, ""},
               &records);
  CKPTFS_RETURN_IF_ERROR(writer.Append(records));
  CKPTFS_RETURN_IF_ERROR(device->Flush());
  return WriteSuperblock(device.get(), sb);
}

}  // namespace ckptfs
