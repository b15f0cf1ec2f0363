// EncodeSnapshot implementation.
#include "meta/snapshot.h"

#include <algorithm>
#include <vector>

#include "log/record.h"

namespace ckptfs {

void EncodeSnapshot(const Namespace& ns, std::string* out) {
  // Sorted, so a snapshot of the same state is the same bytes.
  std::vector<const Inode*> nodes;
  nodes.reserve(ns.inodes().size());
  for (const auto& [ino, node] : ns.inodes()) nodes.push_back(node.get());
  std::sort(nodes.begin(), nodes.end(), [](const Inode* a, const Inode* b) { return a->ino < b->ino; });

  for (const Inode* n : nodes) {
    EncodeRecord(record::CreateInode{n->ino, n->mode, n->uid, n->gid, n->rdev, n->ctime_ns,
                                     n->symlink_target},
                 out);
  }
  for (const Inode* n : nodes) {
    if (!n->is_dir()) continue;
    for (const auto& [cookie, name] : n->names_by_cookie) {  // position order: one tree, one encoding
      EncodeRecord(record::Link{n->ino, name, n->entries.at(name).ino, n->ctime_ns}, out);
    }
  }
  for (const Inode* n : nodes) {
    if (n->is_regular()) {
      uint64_t mapped_end = 0;
      for (const auto& [offset, e] : n->extents.entries()) {
        // Data still waiting for a compressor is not stored anywhere yet
        // (compaction waits for it; this skips the bytes of a run that failed).
        if (e.phys.pending() || e.phys.reserved()) continue;
        EncodeRecord(record::WriteExtent{n->ino, offset, static_cast<uint32_t>(e.length), e.phys,
                                         e.skip, 0},
                     out);
        mapped_end = offset + e.length;
      }
      if (n->size != mapped_end) EncodeRecord(record::Truncate{n->ino, n->size, n->mtime_ns}, out);
      // After the size: space reserved past the end of the file stays.
      for (const auto& [offset, e] : n->extents.entries()) {
        if (e.phys.reserved()) EncodeRecord(record::Reserve{n->ino, offset, e.length}, out);
      }
    }
    for (const auto& [name, value] : n->xattrs) {
      EncodeRecord(record::SetXattr{n->ino, name, value, n->ctime_ns}, out);
    }
    using A = record::SetAttr;
    EncodeRecord(A{n->ino, A::kMode | A::kUid | A::kGid | A::kAtime | A::kMtime | A::kCtime,
                   n->mode, n->uid, n->gid, n->atime_ns, n->mtime_ns, n->ctime_ns},
                 out);
  }
  EncodeRecord(record::NextInode{ns.next_ino()}, out);
}

}  // namespace ckptfs
