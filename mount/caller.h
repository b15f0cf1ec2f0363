// What a FUSE request says of its caller beyond uid, gid and pid: its
// supplementary groups and whether it holds CAP_FSETID, for the set-id
// rules a write, truncate, fallocate or chown follows (fuse_ops.cc).
#pragma once

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <sys/types.h>

namespace ckptfs {

// Whether the caller is in group `gid` (its own or a supplementary one).
bool CallerInGroup(fuse_req_t req, gid_t gid);
// Whether the caller holds CAP_FSETID (keeps set-id bits on what it
// changes). The kernel says so only in a WRITE's and a SETATTR's flags; for
// other requests (fallocate) the caller's effective capabilities are read
// from /proc, and a caller not found there (it exited, or is in another pid
// namespace) counts as privileged only as root.
bool CallerHasCapFsetid(fuse_req_t req);

}  // namespace ckptfs
