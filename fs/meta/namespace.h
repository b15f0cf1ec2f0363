// Namespace: the inode table and directory tree, changed only by applying
// log records.
//
// Live operations validate, build a record, Apply it and append it to the
// log; mount replays the log through the same Apply. One code path for both
// is what makes a remount see exactly the tree that was committed. Not
// thread-safe: the Journal owns it and guards it with its namespace lock.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "ckptfs/status.h"
#include "log/record.h"
#include "meta/inode.h"
#include "meta/space_observer.h"

namespace ckptfs {

inline constexpr uint64_t kRootIno = 1;

// One mapping of a file's bytes to a stored run, as the cleaner and the
// evictor list them before moving the run: file bytes [offset, offset +
// length) of inode `ino` are the run's decoded bytes from `skip`.
struct MappedRun {
  uint64_t ino;
  uint64_t offset;
  uint64_t length;
  PhysicalExtent phys;
  uint32_t skip;
};

class Namespace {
 public:
  // `space` must outlive the namespace.
  explicit Namespace(SpaceObserver* space) : space_(space) {}
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;

  // Applies one record. Fails with Corruption if the record does not fit the
  // current state (only a damaged or foreign log can cause that, since live
  // operations validate first).
  Status Apply(const Record& r);

  Inode* Find(uint64_t ino);
  const Inode* Find(uint64_t ino) const;
  // Whether the file's range still maps exactly the stored run it mapped
  // when `run` was listed: what a mover checks before re-pointing it.
  bool StillMaps(const MappedRun& run) const;
  // The child's inode number, if `name` exists in directory `parent`.
  std::optional<uint64_t> Lookup(uint64_t parent, std::string_view name) const;

  // The next unused inode number; never reused within a store.
  uint64_t AllocateIno() { return next_ino_++; }
  uint64_t next_ino() const { return next_ino_; }
  size_t inode_count() const { return inodes_.size(); }
  const std::unordered_map<uint64_t, std::unique_ptr<Inode>>& inodes() const { return inodes_; }

  // One path of `ino` from the root ("/a/b"), or "<inode N>" if it has no
  // name. Walks the whole tree: for error messages, not hot paths.
  std::string PathOf(uint64_t ino) const;

  // True if `ancestor` is `ino` or one of its ancestors (rename loop check).
  bool IsAncestor(uint64_t ancestor, uint64_t ino) const;

 private:
  Status ApplyCreate(const record::CreateInode& r);
  Status ApplyLink(const record::Link& r);
  Status ApplyUnlink(const record::Unlink& r);
  Status ApplyRename(const record::Rename& r);
  Status ApplySetAttr(const record::SetAttr& r);
  Status ApplyTruncate(const record::Truncate& r);
  Status ApplyPunchHole(const record::PunchHole& r);
  Status ApplyReserve(const record::Reserve& r);
  Status ApplyWriteExtent(const record::WriteExtent& r);
  Status ApplySetXattr(const record::SetXattr& r);
  Status ApplyRemoveXattr(const record::RemoveXattr& r);
  Status ApplyFree(const record::FreeInode& r);

  Result<Inode*> Need(uint64_t ino, const char* what);
  Result<Inode*> NeedDir(uint64_t ino, const char* what);
  void AddEntry(Inode* dir, const std::string& name, uint64_t ino);
  void RemoveEntry(Inode* dir, const std::string& name);
  // Drops one name of `child` that lived in `dir`.
  void DropLink(Inode* dir, Inode* child, int64_t time_ns);
  ExtentMap::ReleaseFn Releaser();

  SpaceObserver* const space_;
  std::unordered_map<uint64_t, std::unique_ptr<Inode>> inodes_;
  uint64_t next_ino_ = kRootIno + 1;
};

}  // namespace ckptfs
