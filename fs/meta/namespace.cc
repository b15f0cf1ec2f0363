// Namespace: record application. Link counts follow POSIX: a directory has
// 2 + its subdirectories, a file one per name.
#include "meta/namespace.h"

#include <algorithm>
#include <vector>

#include "meta/dir_cookie.h"

namespace ckptfs {

Inode* Namespace::Find(uint64_t ino) {
  auto it = inodes_.find(ino);
  return it == inodes_.end() ? nullptr : it->second.get();
}

const Inode* Namespace::Find(uint64_t ino) const {
  auto it = inodes_.find(ino);
  return it == inodes_.end() ? nullptr : it->second.get();
}

bool Namespace::StillMaps(const MappedRun& run) const {
  const Inode* node = Find(run.ino);
  if (!node || !node->is_regular()) return false;
  auto now = node->extents.Lookup(run.offset, run.length);
  return now.size() == 1 && !now[0].hole && now[0].phys == run.phys && now[0].skip == run.skip;
}

std::optional<uint64_t> Namespace::Lookup(uint64_t parent, std::string_view name) const {
  const Inode* dir = Find(parent);
  if (!dir || !dir->is_dir()) return std::nullopt;
  auto it = dir->entries.find(std::string(name));
  if (it == dir->entries.end()) return std::nullopt;
  return it->second.ino;
}

std::string Namespace::PathOf(uint64_t ino) const {
  if (ino == kRootIno) return "/";
  std::vector<std::pair<uint64_t, std::string>> stack = {{kRootIno, ""}};
  while (!stack.empty()) {
    auto [dir_ino, path] = stack.back();
    stack.pop_back();
    const Inode* dir = Find(dir_ino);
    if (!dir) continue;
    for (const auto& [name, entry] : dir->entries) {
      std::string child = path + "/" + name;
      if (entry.ino == ino) return child;
      const Inode* node = Find(entry.ino);
      if (node && node->is_dir()) stack.emplace_back(entry.ino, std::move(child));
    }
  }
  return "<inode " + std::to_string(ino) + ">";
}

bool Namespace::IsAncestor(uint64_t ancestor, uint64_t ino) const {
  // Bounded by the inode count, so even a damaged tree cannot loop forever.
  size_t steps = inodes_.size() + 1;
  for (uint64_t cur = ino; steps-- > 0;) {
    if (cur == ancestor) return true;
    const Inode* node = Find(cur);
    if (!node || cur == kRootIno || node->parent == 0) return false;
    cur = node->parent;
  }
  return false;
}

Result<Inode*> Namespace::Need(uint64_t ino, const char* what) {
  Inode* node = Find(ino);
  if (!node) return Status::Corruption(std::string(what) + ": inode " + std::to_string(ino) + " missing");
  return node;
}

Result<Inode*> Namespace::NeedDir(uint64_t ino, const char* what) {
  CKPTFS_ASSIGN_OR_RETURN(Inode* node, Need(ino, what));
  if (!node->is_dir()) {
    return Status::Corruption(std::string(what) + ": inode " + std::to_string(ino) + " not a directory");
  }
  return node;
}

ExtentMap::ReleaseFn Namespace::Releaser() {
  return [this](const PhysicalExtent& phys, uint32_t skip, uint64_t bytes) {
    space_->Released(phys, skip, bytes);
  };
}

void Namespace::AddEntry(Inode* dir, const std::string& name, uint64_t ino) {
  uint64_t cookie = DirCookieOf(name);
  while (dir->names_by_cookie.count(cookie)) cookie = NextDirCookie(cookie);
  dir->entries[name] = DirEntry{ino, cookie};
  dir->names_by_cookie[cookie] = name;
}

void Namespace::RemoveEntry(Inode* dir, const std::string& name) {
  auto it = dir->entries.find(name);
  if (it == dir->entries.end()) return;
  dir->names_by_cookie.erase(it->second.cookie);
  dir->entries.erase(it);
}

void Namespace::DropLink(Inode* dir, Inode* child, int64_t time_ns) {
  if (child->is_dir()) {
    child->nlink = 0;  // its own "." goes with its name
    dir->nlink -= 1;   // the child's ".." pointed at dir
  } else if (child->nlink > 0) {
    child->nlink -= 1;
  }
  child->ctime_ns = time_ns;
}

Status Namespace::Apply(const Record& r) {
  return std::visit(
      [this](const auto& rec) -> Status {
        using T = std::decay_t<decltype(rec)>;
        if constexpr (std::is_same_v<T, record::CreateInode>) return ApplyCreate(rec);
        else if constexpr (std::is_same_v<T, record::Link>) return ApplyLink(rec);
        else if constexpr (std::is_same_v<T, record::Unlink>) return ApplyUnlink(rec);
        else if constexpr (std::is_same_v<T, record::Rename>) return ApplyRename(rec);
        else if constexpr (std::is_same_v<T, record::SetAttr>) return ApplySetAttr(rec);
        else if constexpr (std::is_same_v<T, record::Truncate>) return ApplyTruncate(rec);
        else if constexpr (std::is_same_v<T, record::PunchHole>) return ApplyPunchHole(rec);
        else if constexpr (std::is_same_v<T, record::Reserve>) return ApplyReserve(rec);
        else if constexpr (std::is_same_v<T, record::WriteExtent>) return ApplyWriteExtent(rec);
        else if constexpr (std::is_same_v<T, record::SetXattr>) return ApplySetXattr(rec);
        else if constexpr (std::is_same_v<T, record::RemoveXattr>) return ApplyRemoveXattr(rec);
        else if constexpr (std::is_same_v<T, record::FreeInode>) return ApplyFree(rec);
        else if constexpr (std::is_same_v<T, record::NextInode>) {
          next_ino_ = std::max(next_ino_, rec.next);
          return Status::Ok();
        }
        else return Status::Corruption("NextSegment record outside the log chain");
      },
      r);
}

Status Namespace::ApplyCreate(const record::CreateInode& r) {
  if (r.ino == 0 || inodes_.count(r.ino)) {
    return Status::Corruption("create of existing inode " + std::to_string(r.ino));
  }
  auto node = std::make_unique<Inode>();
  node->ino = r.ino;
  node->mode = r.mode;
  node->uid = r.uid;
  node->gid = r.gid;
  node->rdev = r.rdev;
  node->atime_ns = node->mtime_ns = node->ctime_ns = r.time_ns;
  node->symlink_target = r.symlink_target;
  if (node->is_symlink()) node->size = r.symlink_target.size();
  if (r.ino == kRootIno) {
    node->nlink = 2;
    node->parent = kRootIno;
  }
  inodes_[r.ino] = std::move(node);
  next_ino_ = std::max(next_ino_, r.ino + 1);
  return Status::Ok();
}

Status Namespace::ApplyLink(const record::Link& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * dir, NeedDir(r.parent, "link"));
  CKPTFS_ASSIGN_OR_RETURN(Inode * child, Need(r.ino, "link"));
  if (dir->entries.count(r.name)) return Status::Corruption("link over existing name " + r.name);
  if (child->is_dir() && (child->nlink != 0 || IsAncestor(child->ino, r.parent))) {
    return Status::Corruption("second name or cycle for directory " + std::to_string(r.ino));
  }
  AddEntry(dir, r.name, r.ino);
  if (child->is_dir()) {
    child->nlink = 2;
    child->parent = r.parent;
    dir->nlink += 1;
  } else {
    child->nlink += 1;
  }
  child->ctime_ns = r.time_ns;
  dir->mtime_ns = dir->ctime_ns = r.time_ns;
  return Status::Ok();
}

Status Namespace::ApplyUnlink(const record::Unlink& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * dir, NeedDir(r.parent, "unlink"));
  auto it = dir->entries.find(r.name);
  if (it == dir->entries.end()) return Status::Corruption("unlink of missing name " + r.name);
  CKPTFS_ASSIGN_OR_RETURN(Inode * child, Need(it->second.ino, "unlink"));
  RemoveEntry(dir, r.name);
  DropLink(dir, child, r.time_ns);
  dir->mtime_ns = dir->ctime_ns = r.time_ns;
  return Status::Ok();
}

Status Namespace::ApplyRename(const record::Rename& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * src_dir, NeedDir(r.src_parent, "rename"));
  CKPTFS_ASSIGN_OR_RETURN(Inode * dst_dir, NeedDir(r.dst_parent, "rename"));
  auto src_it = src_dir->entries.find(r.src_name);
  if (src_it == src_dir->entries.end()) return Status::Corruption("rename of missing " + r.src_name);
  CKPTFS_ASSIGN_OR_RETURN(Inode * moved, Need(src_it->second.ino, "rename"));
  auto dst_it = dst_dir->entries.find(r.dst_name);
  Inode* target = nullptr;
  if (dst_it != dst_dir->entries.end()) {
    CKPTFS_ASSIGN_OR_RETURN(target, Need(dst_it->second.ino, "rename"));
  }

  // Moves directory `d` from one parent to another, fixing "..".
  auto reparent = [](Inode* d, Inode* from, Inode* to) {
    if (!d->is_dir() || from == to) return;
    from->nlink -= 1;
    to->nlink += 1;
    d->parent = to->ino;
  };

  if ((moved->is_dir() && moved != target && IsAncestor(moved->ino, r.dst_parent)) ||
      (target && target->is_dir() && (r.flags & record::Rename::kExchange) &&
       IsAncestor(target->ino, r.src_parent))) {
    return Status::Corruption("rename would make a directory its own ancestor");
  }
  if (r.flags & record::Rename::kExchange) {
    if (!target) return Status::Corruption("exchange with missing " + r.dst_name);
    if (target == moved) return Status::Ok();
    src_it->second.ino = target->ino;
    dst_it->second.ino = moved->ino;
    reparent(moved, src_dir, dst_dir);
    reparent(target, dst_dir, src_dir);
    target->ctime_ns = r.time_ns;
  } else {
    if (target == moved) return Status::Ok();  // POSIX: renaming a link onto itself does nothing
    if (target) {
      RemoveEntry(dst_dir, r.dst_name);
      DropLink(dst_dir, target, r.time_ns);
    }
    RemoveEntry(src_dir, r.src_name);
    AddEntry(dst_dir, r.dst_name, moved->ino);
    reparent(moved, src_dir, dst_dir);
  }
  moved->ctime_ns = r.time_ns;
  src_dir->mtime_ns = src_dir->ctime_ns = r.time_ns;
  dst_dir->mtime_ns = dst_dir->ctime_ns = r.time_ns;
  return Status::Ok();
}

Status Namespace::ApplySetAttr(const record::SetAttr& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * node, Need(r.ino, "setattr"));
  if (r.valid & record::SetAttr::kMode) node->mode = (node->mode & S_IFMT) | (r.mode & 07777);
  if (r.valid & record::SetAttr::kUid) node->uid = r.uid;
  if (r.valid & record::SetAttr::kGid) node->gid = r.gid;
  if (r.valid & record::SetAttr::kAtime) node->atime_ns = r.atime_ns;
  if (r.valid & record::SetAttr::kMtime) node->mtime_ns = r.mtime_ns;
  if (r.valid & record::SetAttr::kCtime) node->ctime_ns = r.ctime_ns;
  return Status::Ok();
}

Status Namespace::ApplyTruncate(const record::Truncate& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * node, Need(r.ino, "truncate"));
  if (!node->is_regular()) return Status::Corruption("truncate of a non-regular inode");
  if (r.size < node->size) node->extents.Truncate(r.size, Releaser());
  node->size = r.size;
  node->mtime_ns = node->ctime_ns = r.time_ns;
  return Status::Ok();
}

Status Namespace::ApplyPunchHole(const record::PunchHole& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * node, Need(r.ino, "punch hole"));
  if (!node->is_regular()) return Status::Corruption("hole punched in a non-regular inode");
  node->extents.PunchHole(r.offset, r.length, Releaser());
  node->mtime_ns = node->ctime_ns = r.time_ns;
  return Status::Ok();
}

Status Namespace::ApplyReserve(const record::Reserve& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * node, Need(r.ino, "reserve"));
  if (!node->is_regular()) return Status::Corruption("space reserved for a non-regular inode");
  const PhysicalExtent reserved = PhysicalExtent::Reserved();
  for (const ExtentPiece& p : node->extents.Lookup(r.offset, r.length)) {
    if (!p.hole || p.phys.reserved()) continue;
    node->extents.Insert(p.offset, MappedExtent{p.length, reserved, 0}, Releaser());
    space_->Referenced(reserved, 0, p.length);
  }
  return Status::Ok();
}

Status Namespace::ApplyWriteExtent(const record::WriteExtent& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * node, Need(r.ino, "write"));
  if (!node->is_regular()) return Status::Corruption("extent on a non-regular inode");
  if (r.phys.reserved()) return Status::Corruption("extent of reserved space");
  if (static_cast<uint64_t>(r.skip) + r.length > r.phys.logical_length()) {
    return Status::Corruption("extent reaches past its stored run");
  }
  node->extents.Insert(r.offset, MappedExtent{r.length, r.phys, r.skip}, Releaser());
  space_->Referenced(r.phys, r.skip, r.length);
  node->size = std::max(node->size, r.offset + r.length);
  if (r.mtime_ns != 0) node->mtime_ns = node->ctime_ns = r.mtime_ns;
  return Status::Ok();
}

Status Namespace::ApplySetXattr(const record::SetXattr& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * node, Need(r.ino, "setxattr"));
  node->xattrs[r.name] = r.value;
  node->ctime_ns = r.time_ns;
  return Status::Ok();
}

Status Namespace::ApplyRemoveXattr(const record::RemoveXattr& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * node, Need(r.ino, "removexattr"));
  node->xattrs.erase(r.name);
  node->ctime_ns = r.time_ns;
  return Status::Ok();
}

Status Namespace::ApplyFree(const record::FreeInode& r) {
  CKPTFS_ASSIGN_OR_RETURN(Inode * node, Need(r.ino, "free"));
  if (node->nlink != 0 || r.ino == kRootIno) {
    return Status::Corruption("free of linked inode " + std::to_string(r.ino));
  }
  node->extents.Clear(Releaser());
  inodes_.erase(r.ino);
  return Status::Ok();
}

}  // namespace ckptfs
