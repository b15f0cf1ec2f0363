// BlockDevice: the one seam through which the core touches storage.
//
// Every offset, length and buffer address passed to Read/Write must be a
// multiple of kBlockSize, so implementations may use O_DIRECT. All methods are
// safe to call from several threads at once. A Write that returns OK has
// reached the device but may sit in its volatile cache until Flush returns:
// only Flush makes earlier writes durable. Implementations: FileDevice (pread/
// pwrite), UringDevice (io_uring writes), MemoryDevice (tests).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ckptfs/status.h"

namespace ckptfs {

// Reads of a device served from elsewhere (a RADOS tier): RADOS reads and
// their bytes, and what a local cache of them served and took in. Zeros for
// a local device.
struct RemoteReadCounters {
  uint64_t reads = 0;
  uint64_t bytes = 0;
  uint64_t cache_hit_bytes = 0;
  uint64_t cache_fill_bytes = 0;
};

// Bytes a device read into memory of its own and lends out (ReadLent);
// `owner` keeps them. Empty (no owner) when the device did not lend them.
struct LentBytes {
  const char* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
  // Their CRC32C, when the device knew it without reading the bytes again.
  std::optional<uint32_t> crc32c;
};

class BlockDevice {
 public:
  virtual ~BlockDevice() = default;

  virtual Status Read(uint64_t offset, void* buf, size_t len) = 0;
  // Writes len bytes; large writes may be split and issued in parallel.
  virtual Status Write(uint64_t offset, const void* buf, size_t len) = 0;
  // Returns once every write that returned before the call is durable.
  virtual Status Flush() = 0;
  // Usable bytes, a multiple of kBlockSize.
  virtual uint64_t size() const = 0;
  // Makes sure later writes to [offset, offset + len) cannot fail for want
  // of space under the device: allocates a sparse file's blocks. NoSpace
  // when the filesystem holding it is full. Nothing to do where nothing is
  // sparse (block devices, memory).
  virtual Status Provision(uint64_t offset, uint64_t len) { return Status::Ok(); }
  // Bytes of the device with no blocks under them that could not get them
  // now: how much of a sparse file exceeds the free space left under it.
  virtual uint64_t ProvisionShortfall() const { return 0; }
  // Whether reads at remote addresses (PhysicalExtent::kRemoteBit: runs
  // evicted to a tier) return the tier's bytes. Devices that do not serve
  // them fail such reads.
  virtual bool ServesRemoteRuns() const { return false; }
  // Reads `len` bytes at `offset` (neither need be block-aligned) into
  // memory the device allocates, and lends it: for a device whose reads
  // arrive in memory of its own anyway (RADOS replies), where a Read into
  // the caller's buffer copies every byte once more. Empty when the device
  // does not lend (the default) or not these bytes: then Read them.
  virtual Result<LentBytes> ReadLent(uint64_t offset, size_t len) { return LentBytes{}; }
  virtual RemoteReadCounters remote_counters() const { return {}; }
};

struct DeviceOptions {
  bool direct_io = true;       // O_DIRECT, falling back to buffered I/O where refused
  bool use_uring = true;       // io_uring for writes
  // flock: LOCK_EX, or LOCK_SH when read_only, so one read-write open or
  // any number of read-only ones hold a store at a time.
  bool exclusive = true;
  bool read_only = false;  // O_RDONLY; never with use_uring (writes only)
  unsigned uring_queue_depth = 32;
};

// Opens a regular file or block device. Fails with Busy when another process
// holds the store, NotFound when the path does not exist.
Result<std::unique_ptr<BlockDevice>> OpenDevice(const std::string& path,
                                                const DeviceOptions& options);

}  // namespace ckptfs
