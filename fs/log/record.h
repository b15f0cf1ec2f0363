// Metadata log records: the redo operations that rebuild the namespace.
//
// Every change to the namespace is one record, applied in memory and appended
// to the log in the same order; replay applies the same records through the
// same code (meta/namespace.h), so a remount sees exactly what was committed.
// Record bodies (little-endian; str = u32 length + bytes; time = i64 ns):
//   1 CreateInode  ino u64, mode u32, uid u32, gid u32, rdev u64, time, target str
//   2 Link         parent u64, name str, ino u64, time
//   3 Unlink       parent u64, name str, time
//   4 Rename       src_parent u64, src_name str, dst_parent u64, dst_name str, flags u32, time
//   5 SetAttr      ino u64, valid u32, mode u32, uid u32, gid u32, atime, mtime, ctime
//   6 Truncate     ino u64, size u64, time
//   7 WriteExtent  ino u64, offset u64, length u32, addr u64, stored_len u32, crc u32,
//                  skip u32, mtime (0: leave as is)
//   13 WriteExtent of a compressed run: the same fields, then codec u8
//                  (format/physical_extent.h) and raw_len u32, the run's
//                  length once decoded; `skip` and `length` count decoded
//                  bytes. Type 7 is written for raw runs, so stores that
//                  never compressed stay readable by older versions.
//   8 SetXattr     ino u64, name str, value str, time
//   9 RemoveXattr  ino u64, name str, time
//   10 FreeInode   ino u64
//   11 NextSegment segment u32 (log chain only; never reaches the namespace)
//   12 NextInode   next u64 (the inode counter, so numbers stay unique
//                  across a compaction that drops freed inodes)
//   14 PunchHole   ino u64, offset u64, length u64, time (unmaps the range;
//                  the size stays)
//   15 Reserve     ino u64, offset u64, length u64 (fallocate: the holes in
//                  the range become reserved space, PhysicalExtent::
//                  Reserved(); mapped bytes stay, and so do size and times)
// The type numbers are fixed in record.cc (kRecordType), one per struct.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "ckptfs/status.h"
#include "format/physical_extent.h"

namespace ckptfs {

namespace record {

struct CreateInode {
  uint64_t ino;
  uint32_t mode;
  uint32_t uid;
  uint32_t gid;
  uint64_t rdev;
  int64_t time_ns;
  std::string symlink_target;
};
struct Link {
  uint64_t parent;
  std::string name;
  uint64_t ino;
  int64_t time_ns;
};
struct Unlink {
  uint64_t parent;
  std::string name;
  int64_t time_ns;
};
struct Rename {
  // Same values as renameat2's RENAME_NOREPLACE / RENAME_EXCHANGE.
  static constexpr uint32_t kNoReplace = 1;
  static constexpr uint32_t kExchange = 2;
  uint64_t src_parent;
  std::string src_name;
  uint64_t dst_parent;
  std::string dst_name;
  uint32_t flags;
  int64_t time_ns;
};
struct SetAttr {
  static constexpr uint32_t kMode = 1, kUid = 2, kGid = 4, kAtime = 8, kMtime = 16, kCtime = 32;
  uint64_t ino;
  uint32_t valid;
  uint32_t mode;
  uint32_t uid;
  uint32_t gid;
  int64_t atime_ns;
  int64_t mtime_ns;
  int64_t ctime_ns;
};
struct Truncate {
  uint64_t ino;
  uint64_t size;
  int64_t time_ns;
};
struct WriteExtent {
  uint64_t ino;
  uint64_t offset;
  uint32_t length;
  PhysicalExtent phys;
  uint32_t skip;  // file data starts `skip` bytes into phys
  int64_t mtime_ns;
};
struct SetXattr {
  uint64_t ino;
  std::string name;
  std::string value;
  int64_t time_ns;
};
struct RemoveXattr {
  uint64_t ino;
  std::string name;
  int64_t time_ns;
};
struct FreeInode {
  uint64_t ino;
};
struct NextSegment {
  uint32_t segment;
};
struct NextInode {
  uint64_t next;
};
struct PunchHole {
  uint64_t ino;
  uint64_t offset;
  uint64_t length;
  int64_t time_ns;
};
struct Reserve {
  uint64_t ino;
  uint64_t offset;
  uint64_t length;
};

}  // namespace record

using Record = std::variant<record::CreateInode, record::Link, record::Unlink, record::Rename,
                            record::SetAttr, record::Truncate, record::WriteExtent,
                            record::SetXattr, record::RemoveXattr, record::FreeInode,
                            record::NextSegment, record::NextInode, record::PunchHole,
                            record::Reserve>;

// Appends the encoding of `r` (type, length, body) to `out`.
void EncodeRecord(const Record& r, std::string* out);

// Decodes the record at the front of `*in` and advances past it. Corruption
// when the bytes do not form a record of a known type.
Result<Record> DecodeRecord(std::string_view* in);

}  // namespace ckptfs
