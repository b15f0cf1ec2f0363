// Converts `strace -f -tt` output of an unmodified program into a Trace, so a
// real trainer's checkpoint pattern (e.g. python running torch.save) can be
// replayed on any filesystem. Each traced pid becomes a rank, in order of its
// first kept operation; paths become relative to a root directory.
#pragma once

#include <string>
#include <string_view>

#include "ckptfs/status.h"
#include "trace.h"

namespace ckptfs::replay {

struct StraceConvertOptions {
  // Only operations under this directory are kept, with paths made relative
  // to it. Empty: the deepest directory holding every file the program wrote.
  std::string root;
};

struct StraceConvertStats {
  size_t lines = 0;
  size_t syscalls_kept = 0;
  size_t syscalls_ignored = 0;  // other paths, failed calls, untracked descriptors
  std::string root;             // the root actually used
};

// Errors name the offending line ("line N: ..."); lines strace itself prints
// for signals and exits are skipped.
Result<Trace> ConvertStrace(std::string_view log, const StraceConvertOptions& options,
                            StraceConvertStats* stats = nullptr);
Result<Trace> ConvertStraceFile(const std::string& path, const StraceConvertOptions& options,
                                StraceConvertStats* stats = nullptr);

}  // namespace ckptfs::replay
