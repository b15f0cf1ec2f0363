// The kernel caps a FUSE mount's readahead at the default 128 KiB, whatever
// max_readahead the daemon asks for, so sequential restores arrive as many
// small reads. Raising the mount's bdi read_ahead_kb (root only) lets reads
// grow to max_pages; measured 2x faster for a single sequential reader.
#pragma once

#include <string>

#include "ckptfs/status.h"

namespace ckptfs {

// Sets read_ahead_kb of the bdi behind `mountpoint`, found through
// /proc/self/mountinfo (no stat of the mount: its daemon may not answer yet).
Status SetMountReadAhead(const std::string& mountpoint, unsigned kilobytes);

}  // namespace ckptfs
