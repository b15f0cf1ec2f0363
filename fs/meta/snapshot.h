// Snapshot: the whole namespace written as log records, so the metadata log
// can restart from it and drop everything before (log compaction).
//
// Replaying a snapshot through Namespace::Apply rebuilds the same inodes,
// names, link counts, sizes, extents, xattrs and times. Order: every inode is
// created, then every name linked, then each inode's extents, size, xattrs
// and finally its attributes and times (linking touches times, so they come
// last), then the inode counter.
#pragma once

#include <string>

#include "meta/namespace.h"

namespace ckptfs {

// Appends the snapshot's encoded records to `out`.
void EncodeSnapshot(const Namespace& ns, std::string* out);

}  // namespace ckptfs
