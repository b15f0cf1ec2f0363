// LogStructuredFs's namespace operations: each validates its arguments
// against the tree under the journal's namespace lock, then changes it only
// through Journal::Apply (one record per change, in order). A store that
// takes no changes (read-only, or failed) refuses each change first, before
// looking at its arguments, as the VFS answers EROFS on a read-only mount.
// The data path, the lifecycle and the figures are in log_structured_fs.cc.
#include <fcntl.h>
#include <linux/fs.h>
#include <spdlog/spdlog.h>
#include <sys/xattr.h>
#include <time.h>

#include "log_structured_fs.h"
#include "util/clock.h"

namespace ckptfs {
namespace {

constexpr size_t kMaxSymlinkLength = 4095;
constexpr size_t kMaxXattrName = 255;
constexpr size_t kMaxXattrValue = 64 * 1024;

int64_t ToNs(const struct timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct timespec FromNs(int64_t ns) {
  struct timespec ts;
  ts.tv_sec = ns / 1000000000;
  ts.tv_nsec = ns % 1000000000;
  return ts;
}

Status CheckName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos) {
    return Status::Invalid("bad file name");
  }
  if (name.size() > LogStructuredFs::kMaxNameLength) {
    return Status::NameTooLong(std::string(name.substr(0, 32)));
  }
  return Status::Ok();
}

}  // namespace

struct stat LogStructuredFs::StatOf(const Inode& node) const {
  struct stat st {};
  st.st_ino = node.ino;
  st.st_mode = node.mode;
  st.st_nlink = node.nlink;
  st.st_uid = node.uid;
  st.st_gid = node.gid;
  st.st_rdev = node.rdev;
  st.st_size = static_cast<off_t>(node.is_dir() ? 4096 : node.size);
  st.st_blksize = 1 << 20;  // tells cp, dd and friends to use large I/O
  // What the file occupies on the device, as du should show it.
  uint64_t stored = node.is_regular() ? node.extents.stored_bytes() : 0;
  st.st_blocks = static_cast<blkcnt_t>((stored + 511) / 512);
  st.st_atim = FromNs(node.atime_ns);
  st.st_mtim = FromNs(node.mtime_ns);
  st.st_ctim = FromNs(node.ctime_ns);
  return st;
}

Result<struct stat> LogStructuredFs::Lookup(uint64_t parent, std::string_view name) {
  ReaderLock lock(journal_.mu());
  const Inode* dir = journal_.ns().Find(parent);
  if (!dir) return Status::NotFound("no inode " + std::to_string(parent));
  // "." of any inode is the inode, while it has a name: how the kernel
  // finds a file handle's inode again (a removed one is stale, as on ext4).
  if (name == "." && dir->nlink == 0) return Status::NotFound("inode " + std::to_string(parent) + " was removed");
  if (!dir->is_dir() && name != ".") return Status::NotDirectory("lookup in a non-directory");
  if (name.size() > kMaxNameLength) return Status::NameTooLong("lookup");
  uint64_t ino;
  if (name == ".") {
    ino = parent;
  } else if (name == "..") {
    ino = dir->parent;
  } else {
    auto child = journal_.ns().Lookup(parent, name);
    if (!child) return Status::NotFound(std::string(name));
    ino = *child;
  }
  const Inode* node = journal_.ns().Find(ino);
  if (!node) return Status::NotFound(std::string(name));
  node->lookups.fetch_add(1);
  return StatOf(*node);
}

void LogStructuredFs::Forget(uint64_t ino, uint64_t count) {
  DropUse(ino, Use::kLookup, count);
}

void LogStructuredFs::DropUse(uint64_t ino, Use use, uint64_t count) {
  {
    ReaderLock lock(journal_.mu());
    const Inode* node = journal_.ns().Find(ino);
    if (!node) return;
    std::atomic<uint64_t>& uses = use == Use::kLookup ? node->lookups : node->open_handles;
    uint64_t before = uses.load();
    uint64_t after;
    do {
      after = before >= count ? before - count : 0;
    } while (!uses.compare_exchange_weak(before, after));
    if (after > 0 || node->nlink > 0) return;
  }
  WriterLock lock(journal_.mu());
  if (const Inode* node = journal_.ns().Find(ino)) {
    Status s = FreeIfUnused(*node);
    if (!s.ok()) spdlog::warn("freeing inode {}: {}", ino, s.ToString());
  }
}

Status LogStructuredFs::FreeIfUnused(const Inode& node) {
  // Read-only: an inode nothing names is left for a read-write mount.
  if (options_.read_only) return Status::Ok();
  if (node.nlink > 0 || node.lookups.load() > 0 || node.open_handles.load() > 0 ||
      node.ino == kRootIno) {
    return Status::Ok();
  }
  return journal_.Apply(record::FreeInode{node.ino});
}

Result<struct stat> LogStructuredFs::GetAttr(uint64_t ino) {
  ReaderLock lock(journal_.mu());
  const Inode* node = journal_.ns().Find(ino);
  if (!node) return Status::NotFound("no inode " + std::to_string(ino));
  return StatOf(*node);
}

Result<struct stat> LogStructuredFs::SetAttr(uint64_t ino, const AttrChange& change) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  WriterLock lock(journal_.mu());
  const Inode* node = journal_.ns().Find(ino);
  if (!node) return Status::NotFound("no inode " + std::to_string(ino));
  const int64_t now = NowNs();
  if (change.set_size) {
    if (node->is_dir()) return Status::IsDirectory("truncate of a directory");
    if (!node->is_regular()) return Status::Invalid("truncate of a special file");
    CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::Truncate{ino, change.size, now}));
  }
  if (!change.set_mode) CKPTFS_RETURN_IF_ERROR(DropSetIdBits(ino, change.drop_setid));
  record::SetAttr r{ino, record::SetAttr::kCtime, 0, 0, 0, 0, 0, now};
  if (change.set_mode) { r.valid |= record::SetAttr::kMode; r.mode = change.mode; }
  if (change.set_uid) { r.valid |= record::SetAttr::kUid; r.uid = change.uid; }
  if (change.set_gid) { r.valid |= record::SetAttr::kGid; r.gid = change.gid; }
  if (change.set_atime) {
    r.valid |= record::SetAttr::kAtime;
    r.atime_ns = change.atime_now ? now : ToNs(change.atime);
  }
  if (change.set_mtime) {
    r.valid |= record::SetAttr::kMtime;
    r.mtime_ns = change.mtime_now ? now : ToNs(change.mtime);
  }
  if (change.set_ctime) r.ctime_ns = ToNs(change.ctime);
  if (r.valid != record::SetAttr::kCtime || !change.set_size || change.set_ctime) {
    CKPTFS_RETURN_IF_ERROR(journal_.Apply(r));
  }
  return StatOf(*node);
}

namespace {

constexpr char kCapabilityXattr[] = "security.capability";

// The mode `drop` leaves: setuid always goes; setgid goes when the file is
// group-executable, or when the caller is outside the file's group.
uint32_t ModeAfterDrop(uint32_t mode, SetIdDrop drop) {
  if (drop == SetIdDrop::kNone) return mode;
  mode &= ~S_ISUID;
  if (drop == SetIdDrop::kSetuidSetgid || (mode & S_IXGRP)) mode &= ~S_ISGID;
  return mode;
}

}  // namespace

bool LogStructuredFs::NeedsSetIdDrop(const Inode& node, SetIdDrop drop) {
  // Directories keep their bits (setgid there means inheritance); a chown
  // clears them from every other type, a write or truncate only reaches
  // regular files anyway.
  if (drop == SetIdDrop::kNone || node.is_dir()) return false;
  return ModeAfterDrop(node.mode, drop) != node.mode || node.xattrs.count(kCapabilityXattr) > 0;
}

Status LogStructuredFs::DropSetIdBits(uint64_t ino, SetIdDrop drop) {
  const Inode* node = journal_.ns().Find(ino);
  if (!node || !NeedsSetIdDrop(*node, drop)) return Status::Ok();
  const int64_t now = NowNs();
  if (node->xattrs.count(kCapabilityXattr)) {
    CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::RemoveXattr{ino, kCapabilityXattr, now}));
  }
  const uint32_t mode = ModeAfterDrop(node->mode, drop);
  if (mode == node->mode) return Status::Ok();
  return journal_.Apply(record::SetAttr{ino, record::SetAttr::kMode | record::SetAttr::kCtime, mode, 0, 0,
                                0, 0, now});
}

Result<const Inode*> LogStructuredFs::WritableDir(uint64_t parent, std::string_view name) const {
  CKPTFS_RETURN_IF_ERROR(CheckName(name));
  const Inode* dir = journal_.ns().Find(parent);
  if (!dir) return Status::NotFound("no inode " + std::to_string(parent));
  if (!dir->is_dir()) return Status::NotDirectory("parent is not a directory");
  if (dir->nlink == 0) return Status::NotFound("directory was removed");
  if (dir->entries.count(std::string(name))) return Status::Exists(std::string(name));
  return dir;
}

Result<struct stat> LogStructuredFs::CreateNode(uint64_t parent, std::string_view name,
                                                uint32_t mode, uint32_t uid, uint32_t gid,
                                                uint64_t rdev, std::string_view target) {
  CKPTFS_ASSIGN_OR_RETURN(const Inode* dir, WritableDir(parent, name));
  // A set-group-id directory gives what is made in it its group, and its
  // subdirectories the bit too, as ext4's inode_init_owner does. The
  // kernel has already taken set-group-id off a new file whose maker is
  // outside that group (vfs_prepare_mode).
  if (dir->mode & S_ISGID) {
    gid = dir->gid;
    if (S_ISDIR(mode)) mode |= S_ISGID;
  }
  const int64_t now = NowNs();
  const uint64_t ino = journal_.AllocateIno();
  CKPTFS_RETURN_IF_ERROR(
      journal_.Apply(record::CreateInode{ino, mode, uid, gid, rdev, now, std::string(target)}));
  CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::Link{parent, std::string(name), ino, now}));
  const Inode* node = journal_.ns().Find(ino);
  if (node->is_regular() || node->is_dir()) {
    CKPTFS_RETURN_IF_ERROR(InheritCompression(*journal_.ns().Find(parent), ino));
  }
  node->lookups.fetch_add(1);
  return StatOf(*node);
}

Status LogStructuredFs::InheritCompression(const Inode& parent, uint64_t child) {
  auto it = parent.xattrs.find(kCompressXattr);
  if (it == parent.xattrs.end()) return Status::Ok();
  return journal_.Apply(record::SetXattr{child, kCompressXattr, it->second, NowNs()});
}

Result<struct stat> LogStructuredFs::Create(uint64_t parent, std::string_view name, uint32_t mode,
                                            uint32_t uid, uint32_t gid) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  if (S_ISDIR(mode) || S_ISLNK(mode)) return Status::Invalid("create of a directory or symlink");
  if ((mode & S_IFMT) == 0) mode |= S_IFREG;
  WriterLock lock(journal_.mu());
  return CreateNode(parent, name, mode, uid, gid, 0, {});
}

Result<struct stat> LogStructuredFs::Mknod(uint64_t parent, std::string_view name, uint32_t mode,
                                           uint64_t rdev, uint32_t uid, uint32_t gid) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  const uint32_t type = mode & S_IFMT;
  if (type != S_IFREG && type != S_IFIFO && type != S_IFSOCK && type != S_IFCHR &&
      type != S_IFBLK) {
    return Status::Invalid("mknod of a directory, symlink or unknown file type");
  }
  if (type != S_IFCHR && type != S_IFBLK) rdev = 0;
  WriterLock lock(journal_.mu());
  return CreateNode(parent, name, mode, uid, gid, rdev, {});
}

Result<struct stat> LogStructuredFs::Mkdir(uint64_t parent, std::string_view name, uint32_t mode,
                                           uint32_t uid, uint32_t gid) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  WriterLock lock(journal_.mu());
  return CreateNode(parent, name, S_IFDIR | (mode & 07777), uid, gid, 0, {});
}

Result<struct stat> LogStructuredFs::Symlink(uint64_t parent, std::string_view name,
                                             std::string_view target, uint32_t uid, uint32_t gid) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  if (target.empty()) return Status::NotFound("empty symlink target");
  if (target.size() > kMaxSymlinkLength) return Status::NameTooLong("symlink target");
  WriterLock lock(journal_.mu());
  return CreateNode(parent, name, S_IFLNK | 0777, uid, gid, 0, target);
}

Result<struct stat> LogStructuredFs::Link(uint64_t ino, uint64_t new_parent,
                                          std::string_view name) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  WriterLock lock(journal_.mu());
  const Inode* node = journal_.ns().Find(ino);
  if (!node) return Status::NotFound("no inode " + std::to_string(ino));
  if (node->is_dir()) return Status::Permission("hard link to a directory");
  if (node->nlink == 0) return Status::NotFound("link to a removed file");
  CKPTFS_RETURN_IF_ERROR(WritableDir(new_parent, name).status());
  CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::Link{new_parent, std::string(name), ino, NowNs()}));
  node->lookups.fetch_add(1);
  return StatOf(*node);
}

Result<std::string> LogStructuredFs::ReadLink(uint64_t ino) {
  ReaderLock lock(journal_.mu());
  const Inode* node = journal_.ns().Find(ino);
  if (!node) return Status::NotFound("no inode " + std::to_string(ino));
  if (!node->is_symlink()) return Status::Invalid("not a symlink");
  return node->symlink_target;
}

Status LogStructuredFs::Unlink(uint64_t parent, std::string_view name) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  WriterLock lock(journal_.mu());
  auto ino = journal_.ns().Lookup(parent, name);
  if (!ino) return Status::NotFound(std::string(name));
  const Inode* node = journal_.ns().Find(*ino);
  if (node->is_dir()) return Status::IsDirectory(std::string(name));
  CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::Unlink{parent, std::string(name), NowNs()}));
  return FreeIfUnused(*node);
}

Status LogStructuredFs::Rmdir(uint64_t parent, std::string_view name) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  if (name == ".") return Status::Invalid("rmdir of .");
  WriterLock lock(journal_.mu());
  auto ino = journal_.ns().Lookup(parent, name);
  if (!ino) return Status::NotFound(std::string(name));
  const Inode* node = journal_.ns().Find(*ino);
  if (!node->is_dir()) return Status::NotDirectory(std::string(name));
  if (!node->entries.empty()) return Status::NotEmpty(std::string(name));
  CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::Unlink{parent, std::string(name), NowNs()}));
  return FreeIfUnused(*node);
}

Status LogStructuredFs::Rename(uint64_t parent, std::string_view name, uint64_t new_parent,
                               std::string_view new_name, uint32_t flags) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE)) return Status::Invalid("rename flags");
  if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE)) {
    return Status::Invalid("RENAME_NOREPLACE with RENAME_EXCHANGE");
  }
  CKPTFS_RETURN_IF_ERROR(CheckName(name));
  CKPTFS_RETURN_IF_ERROR(CheckName(new_name));
  WriterLock lock(journal_.mu());
  const Inode* src_dir = journal_.ns().Find(parent);
  const Inode* dst_dir = journal_.ns().Find(new_parent);
  if (!src_dir || !dst_dir) return Status::NotFound("rename directory");
  if (!src_dir->is_dir() || !dst_dir->is_dir()) return Status::NotDirectory("rename parent");
  auto src_ino = journal_.ns().Lookup(parent, name);
  if (!src_ino) return Status::NotFound(std::string(name));
  const Inode* moved = journal_.ns().Find(*src_ino);
  auto dst_ino = journal_.ns().Lookup(new_parent, new_name);
  const Inode* target = dst_ino ? journal_.ns().Find(*dst_ino) : nullptr;

  if (flags & RENAME_EXCHANGE) {
    if (!target) return Status::NotFound(std::string(new_name));
    if ((moved->is_dir() && journal_.ns().IsAncestor(moved->ino, new_parent)) ||
        (target->is_dir() && journal_.ns().IsAncestor(target->ino, parent))) {
      return Status::Invalid("exchange would make a directory its own ancestor");
    }
  } else {
    if (target && (flags & RENAME_NOREPLACE)) return Status::Exists(std::string(new_name));
    if (moved->is_dir() && journal_.ns().IsAncestor(moved->ino, new_parent)) {
      return Status::Invalid("rename of a directory into itself");
    }
    if (target && target != moved) {
      if (moved->is_dir()) {
        if (!target->is_dir()) return Status::NotDirectory(std::string(new_name));
        if (!target->entries.empty()) return Status::NotEmpty(std::string(new_name));
      } else if (target->is_dir()) {
        return Status::IsDirectory(std::string(new_name));
      }
    }
  }
  CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::Rename{parent, std::string(name), new_parent,
                                               std::string(new_name), flags, NowNs()}));
  if (target && target != moved && !(flags & RENAME_EXCHANGE)) return FreeIfUnused(*target);
  return Status::Ok();
}

Status LogStructuredFs::OpenFile(uint64_t ino, int flags) {
  // Only a read-only store refuses an open for writing: after a failure the
  // writes themselves fail, and opens keep working for reads.
  const bool for_writing = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
  if (options_.read_only && for_writing) return journal_.CheckWritable();
  ReaderLock lock(journal_.mu());
  const Inode* node = journal_.ns().Find(ino);
  if (!node) return Status::NotFound("no inode " + std::to_string(ino));
  node->open_handles.fetch_add(1);
  return Status::Ok();
}

void LogStructuredFs::ReleaseFile(uint64_t ino) { DropUse(ino, Use::kOpenHandle, 1); }

bool LogStructuredFs::AtimeDue(const Inode& node, int64_t now_ns) const {
  if (options_.read_only || options_.atime == AtimePolicy::kNoatime) return false;
  if (node.is_dir() && options_.nodiratime) return false;
  if (options_.atime == AtimePolicy::kStrictatime) return true;
  // relatime, as the kernel's relatime_need_update decides it. The times
  // it compares come from one clock, the kernel's coarse one (NowNs).
  constexpr int64_t kDayNs = int64_t{24} * 3600 * 1000000000;
  return node.atime_ns <= node.mtime_ns || node.atime_ns <= node.ctime_ns || now_ns - node.atime_ns >= kDayNs;
}

Result<bool> LogStructuredFs::NoteAccess(uint64_t ino) {
  const int64_t now = NowNs();
  {
    ReaderLock lock(journal_.mu());
    const Inode* node = journal_.ns().Find(ino);
    if (!node) return Status::NotFound("no inode " + std::to_string(ino));
    if (!AtimeDue(*node, now)) return false;
  }
  // A store that failed takes no records; its readers read on.
  if (!journal_.CheckWritable().ok()) return false;
  WriterLock lock(journal_.mu());
  const Inode* node = journal_.ns().Find(ino);
  if (!node || !AtimeDue(*node, now)) return false;  // another reader moved it meanwhile
  CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::SetAttr{ino, record::SetAttr::kAtime, 0, 0, 0, now, 0, 0}));
  return true;
}

Status LogStructuredFs::ReadDir(uint64_t ino, uint64_t cookie, bool plus, const DirFiller& fill) {
  ReaderLock lock(journal_.mu());
  const Inode* dir = journal_.ns().Find(ino);
  if (!dir) return Status::NotFound("no inode " + std::to_string(ino));
  if (!dir->is_dir()) return Status::NotDirectory("readdir of a non-directory");
  if (cookie < 1) {
    if (!fill(".", StatOf(*dir), 1)) return Status::Ok();
  }
  if (cookie < 2) {
    const Inode* parent = journal_.ns().Find(dir->parent);
    if (!fill("..", StatOf(parent ? *parent : *dir), 2)) return Status::Ok();
  }
  for (auto it = dir->names_by_cookie.upper_bound(std::max<uint64_t>(cookie, 2));
       it != dir->names_by_cookie.end(); ++it) {
    const DirEntry& entry = dir->entries.at(it->second);
    const Inode* child = journal_.ns().Find(entry.ino);
    if (!child) continue;
    if (!fill(it->second, StatOf(*child), it->first)) break;
    if (plus) child->lookups.fetch_add(1);
  }
  return Status::Ok();
}

Status LogStructuredFs::SetXattr(uint64_t ino, std::string_view name, std::string_view value,
                                 int flags) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  if (name.empty() || name.size() > kMaxXattrName) return Status::Range("xattr name length");
  if (value.size() > kMaxXattrValue) return Status::NoSpace("xattr value too large");
  if (name == kCompressXattr) CKPTFS_RETURN_IF_ERROR(ParseCompressionPolicy(value).status());
  WriterLock lock(journal_.mu());
  const Inode* node = journal_.ns().Find(ino);
  if (!node) return Status::NotFound("no inode " + std::to_string(ino));
  bool exists = node->xattrs.count(std::string(name)) > 0;
  if ((flags & XATTR_CREATE) && exists) return Status::Exists(std::string(name));
  if ((flags & XATTR_REPLACE) && !exists) return Status::NoData(std::string(name));
  return journal_.Apply(record::SetXattr{ino, std::string(name), std::string(value), NowNs()});
}

Result<std::string> LogStructuredFs::GetXattr(uint64_t ino, std::string_view name) {
  ReaderLock lock(journal_.mu());
  const Inode* node = journal_.ns().Find(ino);
  if (!node) return Status::NotFound("no inode " + std::to_string(ino));
  auto it = node->xattrs.find(std::string(name));
  if (it == node->xattrs.end()) return Status::NoData(std::string(name));
  return it->second;
}

Result<std::string> LogStructuredFs::ListXattr(uint64_t ino) {
  ReaderLock lock(journal_.mu());
  const Inode* node = journal_.ns().Find(ino);
  if (!node) return Status::NotFound("no inode " + std::to_string(ino));
  std::string names;
  for (const auto& [name, value] : node->xattrs) {
    names += name;
    names.push_back('\0');
  }
  return names;
}

Status LogStructuredFs::RemoveXattr(uint64_t ino, std::string_view name) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  WriterLock lock(journal_.mu());
  const Inode* node = journal_.ns().Find(ino);
  if (!node) return Status::NotFound("no inode " + std::to_string(ino));
  if (!node->xattrs.count(std::string(name))) return Status::NoData(std::string(name));
  return journal_.Apply(record::RemoveXattr{ino, std::string(name), NowNs()});
}


}  // namespace ckptfs
