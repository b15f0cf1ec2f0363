// Dropping the page cache before a restore, so reads come from the device as
// they would on a freshly started job, not from memory the writes left behind.
#pragma once

#include "ckptfs/status.h"

namespace ckptfs::replay {

// sync(), then "3" into /proc/sys/vm/drop_caches. Needs root; callers report
// a failure rather than abort, since the run is still meaningful (if cached).
Status DropPageCache();

}  // namespace ckptfs::replay
