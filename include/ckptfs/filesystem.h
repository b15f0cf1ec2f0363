// FileSystem: the ckptfs core as the daemon and the tools see it.
//
// Inode-number based, like the FUSE low-level API, but with no FUSE types:
// errors are Status values and the edge maps them to errno. Every method is
// thread-safe. Lookup-style calls (Lookup, Create, Mkdir, Mknod, Symlink,
// Mknod, Link, and each entry ReadDirPlus returns) add one kernel reference to the
// returned inode; Forget drops them. An inode with no names left is freed
// when its last reference and open handle are gone.
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ckptfs/committed_image.h"
#include "ckptfs/options.h"
#include "ckptfs/read_view.h"
#include "ckptfs/remote_tier.h"
#include "ckptfs/status.h"
#include "ckptfs/store_stats.h"

namespace ckptfs {

// What a write, truncate or chown clears of a file's set-id bits and file
// capability (never a directory's). The kernel leaves this to the filesystem
// (FUSE_HANDLE_KILLPRIV_V2) and the FUSE edge decides it from the request,
// as the kernel's setattr_should_drop_suidgid would for ext4.
enum class SetIdDrop : uint8_t {
  kNone,              // a caller with CAP_FSETID, or the kernel flushing its cache
  kSetuidExecSetgid,  // setuid, setgid if group-executable, security.capability
  kSetuidSetgid,      // setuid and setgid (the caller is outside the file's group), capability
};

// Which attributes SetAttr changes; the rest of the struct is ignored.
struct AttrChange {
  bool set_mode = false, set_uid = false, set_gid = false, set_size = false;
  bool set_atime = false, set_mtime = false;
  // With the writeback cache the kernel keeps ctime itself and sends it.
  bool set_ctime = false;
  bool atime_now = false, mtime_now = false;  // use the current time
  // Applied unless the change sets the mode (chmod decides the bits itself).
  SetIdDrop drop_setid = SetIdDrop::kNone;
  uint32_t mode = 0, uid = 0, gid = 0;
  uint64_t size = 0;
  struct timespec atime {};
  struct timespec mtime {};
  struct timespec ctime {};
};

class FileSystem {
 public:
  // Called per entry by ReadDir; return false to stop (buffer full).
  // `next_cookie` is the position to resume after this entry.
  using DirFiller = std::function<bool(std::string_view name, const struct stat& st,
                                       uint64_t next_cookie)>;

  // Opens a store formatted by Format, replaying its metadata log. The
  // background threads start with Start(), so a daemon can fork in between.
  // With options.read_only the store is opened read-only and never written
  // (see MountOptions::read_only): every change below then fails with
  // Status::ReadOnly, and Sync and Close succeed having written nothing.
  static Result<std::unique_ptr<FileSystem>> Open(const std::string& path,
                                                  const MountOptions& options);
  // Formats `path` (see FormatOptions).
  static Status Format(const std::string& path, const FormatOptions& options);

  virtual ~FileSystem() = default;

  virtual void Start() = 0;
  // Writes everything buffered, commits and stops. After Close only the
  // destructor may be called.
  virtual Status Close() = 0;

  virtual Result<struct stat> Lookup(uint64_t parent, std::string_view name) = 0;
  virtual void Forget(uint64_t ino, uint64_t count) = 0;
  virtual Result<struct stat> GetAttr(uint64_t ino) = 0;
  virtual Result<struct stat> SetAttr(uint64_t ino, const AttrChange& change) = 0;

  virtual Result<struct stat> Create(uint64_t parent, std::string_view name, uint32_t mode,
                                     uint32_t uid, uint32_t gid) = 0;
  // A regular file, FIFO, socket, or character or block device (`rdev`,
  // as makedev(3) packs it); what the node may be used for is the mount's
  // business (nodev).
  virtual Result<struct stat> Mknod(uint64_t parent, std::string_view name, uint32_t mode,
                                    uint64_t rdev, uint32_t uid, uint32_t gid) = 0;
  virtual Result<struct stat> Mkdir(uint64_t parent, std::string_view name, uint32_t mode,
                                    uint32_t uid, uint32_t gid) = 0;
  virtual Result<struct stat> Symlink(uint64_t parent, std::string_view name,
                                      std::string_view target, uint32_t uid, uint32_t gid) = 0;
  virtual Result<struct stat> Link(uint64_t ino, uint64_t new_parent, std::string_view name) = 0;
  virtual Result<std::string> ReadLink(uint64_t ino) = 0;
  virtual Status Unlink(uint64_t parent, std::string_view name) = 0;
  virtual Status Rmdir(uint64_t parent, std::string_view name) = 0;
  // flags: 0, RENAME_NOREPLACE or RENAME_EXCHANGE.
  virtual Status Rename(uint64_t parent, std::string_view name, uint64_t new_parent,
                        std::string_view new_name, uint32_t flags) = 0;

  // Open handles keep an unlinked file's data readable until released.
  // `flags` are open(2)'s: on a read-only store an open for writing
  // (O_WRONLY, O_RDWR or O_TRUNC) fails with Status::ReadOnly.
  virtual Status OpenFile(uint64_t ino, int flags) = 0;
  virtual void ReleaseFile(uint64_t ino) = 0;
  // Notes that `ino` was read: its atime moves as MountOptions::atime
  // says (a read-only store moves none). Returns whether it moved. The
  // daemon calls it for an open for reading and a directory opened for
  // listing, the reads it sees: the kernel serves cached pages without
  // asking.
  virtual Result<bool> NoteAccess(uint64_t ino) = 0;
  // Returns the bytes read (short at end of file).
  virtual Result<size_t> Read(uint64_t ino, uint64_t offset, size_t size, char* buf) = 0;
  // The same bytes, lent instead of copied (short at end of file).
  virtual Status ReadInto(uint64_t ino, uint64_t offset, size_t size, ReadView* view) = 0;
  // `drop_setid`: what the write clears first (see SetIdDrop).
  virtual Result<size_t> Write(uint64_t ino, uint64_t offset, const char* data, size_t size,
                               SetIdDrop drop_setid = SetIdDrop::kNone) = 0;
  // Makes everything written so far (all files, all metadata) durable.
  virtual Status Sync() = 0;
  // fallocate(2): mode 0 extends the file to offset + length if shorter;
  // FALLOC_FL_KEEP_SIZE leaves the size; both reserve the holes of every
  // block the range touches (NoSpace when they do not fit), and writes
  // into reserved space never fail for want of room.
  // FALLOC_FL_PUNCH_HOLE|KEEP_SIZE and FALLOC_FL_ZERO_RANGE unmap the range
  // (its space is freed, reads return zeros). Other modes are
  // NotSupported. `drop_setid`: what it clears first, as a write does.
  virtual Status Fallocate(uint64_t ino, int mode, uint64_t offset, uint64_t length,
                           SetIdDrop drop_setid = SetIdDrop::kNone) = 0;
  // copy_file_range(2): makes [out_offset, out_offset + length) of `out`
  // read as [in_offset, ...) of `in` by pointing it at the same stored
  // runs, so a copy writes no data. Stops at the end of `in`; returns the
  // bytes copied. Invalid for overlapping ranges of one file.
  virtual Result<size_t> CopyRange(uint64_t in, uint64_t in_offset, uint64_t out,
                                   uint64_t out_offset, size_t length,
                                   SetIdDrop drop_setid = SetIdDrop::kNone) = 0;

  // Lists entries after `cookie` (0 starts with "." and ".."). With `plus`
  // each entry's attributes are filled and one reference is added to it.
  virtual Status ReadDir(uint64_t ino, uint64_t cookie, bool plus, const DirFiller& fill) = 0;

  virtual Status SetXattr(uint64_t ino, std::string_view name, std::string_view value,
                          int flags) = 0;
  virtual Result<std::string> GetXattr(uint64_t ino, std::string_view name) = 0;
  // Names, each followed by a NUL, as listxattr(2) returns them.
  virtual Result<std::string> ListXattr(uint64_t ino) = 0;
  virtual Status RemoveXattr(uint64_t ino, std::string_view name) = 0;

  virtual struct statvfs StatFs() = 0;
  virtual StoreStats Stats() = 0;

  // The committed state for a tier to copy; null unless the store was
  // opened with MountOptions::track_committed_images.
  virtual CommittedImageSource* committed_images() { return nullptr; }
  // Where a mount that drains nothing (read-only) reads the runs its store
  // evicted to a tier; null detaches, waiting for reads in progress. A
  // draining mount's tier attaches through committed_images() instead.
  virtual void ReadEvictedRunsFrom(RemoteTier* tier) { (void)tier; }
};

}  // namespace ckptfs
