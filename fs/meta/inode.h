// Inode: the in-memory state of one file, directory or symlink.
//
// Everything except the two volatile counters is rebuilt from the metadata
// log at mount; `lookups` (kernel references) and `open_handles` live only
// while mounted and decide when an unlinked inode may be freed.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "meta/extent_map.h"

namespace ckptfs {

struct DirEntry {
  uint64_t ino;
  uint64_t cookie;  // readdir position; stable while the entry exists
};

struct Inode {
  uint64_t ino = 0;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t rdev = 0;
  uint32_t nlink = 0;
  uint64_t size = 0;
  int64_t atime_ns = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  std::string symlink_target;
  std::map<std::string, std::string> xattrs;
  ExtentMap extents;  // regular files

  // Directories. Cookies 1 and 2 are "." and ".."; an entry's follows
  // from its name (meta/dir_cookie.h).
  uint64_t parent = 0;
  std::map<std::string, DirEntry> entries;
  std::map<uint64_t, std::string> names_by_cookie;

  // mutable: counted by operations that hold the namespace lock only shared.
  mutable std::atomic<uint64_t> lookups{0};
  mutable std::atomic<uint64_t> open_handles{0};

  bool is_dir() const { return S_ISDIR(mode); }
  bool is_regular() const { return S_ISREG(mode); }
  bool is_symlink() const { return S_ISLNK(mode); }
};

}  // namespace ckptfs
