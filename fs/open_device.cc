// OpenFileSystemOnDevice and FormatDevice: the device-level halves of
// FileSystem::Open and FileSystem::Format.
#include "open_device.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "compress/extent_codec.h"
#include "format/superblock.h"
#include "log/log_writer.h"
#include "log/record.h"
#include "log_structured_fs.h"
#include "meta/namespace.h"
#include "util/aligned_buffer.h"

namespace ckptfs {
namespace {

constexpr uint32_t kMinSegments = 8;

}  // namespace

Result<std::unique_ptr<FileSystem>> OpenFileSystemOnDevice(std::unique_ptr<BlockDevice> device,
                                                           const MountOptions& options) {
  CKPTFS_ASSIGN_OR_RETURN(Superblock sb, ReadSuperblock(device.get()));
  auto policy = ParseCompressionPolicy(options.compress);
  if (!policy.ok()) {
    return Status::Invalid("compress=" + options.compress + ": " + policy.status().message());
  }
  auto fs = std::make_unique<LogStructuredFs>(options, *policy, std::move(device), sb);
  CKPTFS_RETURN_IF_ERROR(fs->Recover());
  return std::unique_ptr<FileSystem>(std::move(fs));
}

namespace {

// Whether a store of `size` bytes holds the segments a store needs.
Status CheckStoreSize(uint64_t size, uint64_t segment_size) {
  if (size < kDataStart + kMinSegments * segment_size) {
    return Status::Invalid("store too small: " + std::to_string(size) + " bytes holds fewer than " +
                           std::to_string(kMinSegments) + " segments of " + std::to_string(segment_size) +
                           " bytes");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateFormatOptions(const FormatOptions& options) {
  if (options.segment_size < kMinSegmentSize || options.segment_size > kMaxSegmentSize ||
      options.segment_size % (1 << 20) != 0) {
    return Status::Invalid("segment size must be a multiple of 1 MiB between 2 MiB and 1 GiB");
  }
  if (options.size != 0) return CheckStoreSize(AlignDown(options.size, kBlockSize), options.segment_size);
  return Status::Ok();
}

Status FormatDevice(BlockDevice* device, const FormatOptions& options) {
  CKPTFS_RETURN_IF_ERROR(ValidateFormatOptions(options));
  uint64_t size = device->size();
  if (options.size != 0) size = std::min(size, AlignDown(options.size, kBlockSize));
  CKPTFS_RETURN_IF_ERROR(CheckStoreSize(size, options.segment_size));
  if (ReadSuperblock(device).ok() && !options.force) {
    return Status::Exists("device already holds a ckptfs store; use --force to overwrite it");
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

  LogWriter writer(device, sb, LogPosition{0, 0, sb.log_head_lsn, sb.log_head_prev_crc},
                   []() -> Result<uint32_t> { return Status::NoSpace("mkfs needs one segment"); });
  std::string records;
  EncodeRecord(record::CreateInode{kRootIno, S_IFDIR | 0755, static_cast<uint32_t>(getuid()),
                                   static_cast<uint32_t>(getgid()), 0, sb.created_ns, ""},
               &records);
  CKPTFS_RETURN_IF_ERROR(writer.Append(records));
  CKPTFS_RETURN_IF_ERROR(device->Flush());
  return WriteSuperblock(device, sb);
}

}  // namespace ckptfs
