// ReplayStore: the one replay of a store's metadata log, used by the mount
// (Journal::Recover) and by the checker (ckptfs-fsck), so both see exactly
// the same tree. Every record is checked to point inside the data segments
// and applied to the namespace in log order; then the segment table learns
// which segments the log occupies and which data segments hold nothing.
#pragma once

#include "ckptfs/status.h"
#include "format/superblock.h"
#include "io/block_device.h"
#include "log/log_reader.h"
#include "meta/namespace.h"
#include "segment/segment_table.h"

namespace ckptfs {

// A record that does not fit the tree, or a block that cannot be read, is
// an error; a torn tail ends the log quietly, and damage beyond it (a valid
// block of a later commit) is reported in the result's `damage` for the
// caller to judge. `ns` must be empty and observed by `segments`.
Result<LogReplayResult> ReplayStore(BlockDevice* device, const Superblock& sb, Namespace* ns,
                                    SegmentTable* segments);

}  // namespace ckptfs
