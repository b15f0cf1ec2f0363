// Out-of-line parts of Status: message formatting.
#include "ckptfs/status.h"

#include <cerrno>
#include <cstring>

namespace ckptfs {

Status Status::IOError(std::string_view context, int err) {
  std::string msg(context);
  msg += ": ";
  msg += std::strerror(err);
  if (err == ENOSPC) return Status(Code::kNoSpace, msg);
  return Status(Code::kIOError, msg);
}

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kNotFound: name = "Not found"; break;
    case Code::kExists: name = "Already exists"; break;
    case Code::kNotDirectory: name = "Not a directory"; break;
    case Code::kIsDirectory: name = "Is a directory"; break;
    case Code::kNotEmpty: name = "Directory not empty"; break;
    case Code::kInvalid: name = "Invalid argument"; break;
    case Code::kNoSpace: name = "No space"; break;
    case Code::kNameTooLong: name = "Name too long"; break;
    case Code::kNoData: name = "No data"; break;
    case Code::kRange: name = "Out of range"; break;
    case Code::kNotSupported: name = "Not supported"; break;
    case Code::kPermission: name = "Not permitted"; break;
    case Code::kBusy: name = "Busy"; break;
    case Code::kCorruption: name = "Corruption"; break;
    case Code::kIOError: name = "I/O error"; break;
    case Code::kReadOnly: name = "Read-only"; break;
  }
  return std::string(name) + ": " + message_;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string msg(context);
  msg += ": ";
  msg += message_;
  return Status(code_, msg);
}

}  // namespace ckptfs
