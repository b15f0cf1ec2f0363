// ReplaceFile: writes a file whole beside its final name (PATH.tmp) and
// renames it over PATH, so a reader sees the old version or the new one,
// never part of either. Used for the restore cache's index and for the
// daemon's metrics file.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "ckptfs/status.h"

namespace ckptfs {

// `durable`: the new bytes are fsynced before the rename, so after a crash
// PATH holds one version or the other (a file that only describes the
// moment, such as metrics, need not be). On an error PATH is as it was and
// the temporary file is gone.
Status ReplaceFile(const std::string& path, std::string_view data, mode_t mode, bool durable);

}  // namespace ckptfs
