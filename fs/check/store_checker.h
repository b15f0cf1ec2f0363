// StoreChecker: the offline verification behind ckptfs-fsck.
//
// Reads a store without changing it: both superblocks, the whole metadata
// log (replayed into a private namespace), the directory tree and link
// counts, every stored run's checksum, and the space accounting. Repair then
// fixes what it can through the normal write paths and names what it cannot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ckptfs/status.h"
#include "io/block_device.h"

namespace ckptfs {

struct DamagedRange {
  uint64_t offset;
  uint64_t length;
};

struct DamagedFile {
  uint64_t ino;
  std::string path;  // one of its names
  std::vector<DamagedRange> ranges;
};

struct CheckReport {
  std::vector<std::string> errors;    // the store is not as it should be
  std::vector<std::string> warnings;  // harmless, fixed by the next mount
  std::vector<DamagedFile> damaged_files;
  bool superblock_copy_bad[2] = {false, false};
  bool log_damaged = false;

  uint64_t log_blocks = 0, log_records = 0;
  uint64_t inodes = 0, files = 0, directories = 0, symlinks = 0, orphans = 0;
  uint64_t file_bytes = 0, stored_runs = 0, stored_bytes = 0, compressed_runs = 0;
  // Runs evicted to the store's tier, and those of them this device could
  // not read (a local store checked without its tier).
  uint64_t remote_runs = 0, remote_bytes = 0, remote_unchecked = 0;
  uint32_t segments_total = 0, segments_data = 0, segments_meta = 0, segments_free = 0;

  bool clean() const { return errors.empty(); }
};

// Checks the store on `device`. Fails only when the store cannot be read at
// all (no superblock, I/O error); everything else lands in the report.
Result<CheckReport> CheckStore(BlockDevice* device);

// Repairs what `report` found on the store at `path` (which must not be
// mounted): rewrites a damaged superblock copy from the good one; for each
// damaged file replaces the bad ranges with zeros, records them in the
// xattr user.ckptfs.damaged and links the file into /lost+found, so nothing
// is dropped silently. Log damage cannot be repaired. Returns what it did.
Result<std::vector<std::string>> RepairStore(const std::string& path, const CheckReport& report);

}  // namespace ckptfs
