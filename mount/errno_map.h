// The one place where a core Status becomes an errno, at the FUSE edge.
#pragma once

#include <cerrno>

#include "ckptfs/status.h"

namespace ckptfs {

inline int ToErrno(const Status& s) {
  using C = Status::Code;
  switch (s.code()) {
    case C::kOk: return 0;
    case C::kNotFound: return ENOENT;
    case C::kExists: return EEXIST;
    case C::kNotDirectory: return ENOTDIR;
    case C::kIsDirectory: return EISDIR;
    case C::kNotEmpty: return ENOTEMPTY;
    case C::kInvalid: return EINVAL;
    case C::kNoSpace: return ENOSPC;
    case C::kNameTooLong: return ENAMETOOLONG;
    case C::kNoData: return ENODATA;
    case C::kRange: return ERANGE;
    case C::kNotSupported: return EOPNOTSUPP;
    case C::kPermission: return EPERM;
    case C::kBusy: return EBUSY;
    case C::kCorruption: return EIO;
    case C::kIOError: return EIO;
    case C::kReadOnly: return EROFS;
  }
  return EIO;
}

}  // namespace ckptfs
