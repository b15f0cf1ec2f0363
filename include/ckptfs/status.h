// Status and Result<T>: how every fallible call in ckptfs reports failure.
//
// The core never throws across its API and never returns a bare errno. A
// Status carries a code that callers branch on (NoSpace, Corruption, ...)
// plus a human-readable message; the FUSE edge maps codes to errno in one
// place (mount/errno_map.h). Result<T> is a value or a Status.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace ckptfs {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kNotFound,       // ENOENT
    kExists,         // EEXIST
    kNotDirectory,   // ENOTDIR
    kIsDirectory,    // EISDIR
    kNotEmpty,       // ENOTEMPTY
    kInvalid,        // EINVAL: bad argument or option
    kNoSpace,        // ENOSPC: retry after freeing space
    kNameTooLong,    // ENAMETOOLONG
    kNoData,         // ENODATA: missing xattr
    kRange,          // ERANGE: caller's buffer too small
    kNotSupported,   // EOPNOTSUPP
    kPermission,     // EPERM
    kBusy,           // EBUSY: e.g. store already mounted
    kCorruption,     // EIO: checksum or structure mismatch, data not trusted
    kIOError,        // EIO: the device failed
    kReadOnly,       // EROFS: a change asked of a store opened read-only
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status NotFound(std::string_view msg) { return {Code::kNotFound, msg}; }
  static Status Exists(std::string_view msg) { return {Code::kExists, msg}; }
  static Status NotDirectory(std::string_view msg) { return {Code::kNotDirectory, msg}; }
  static Status IsDirectory(std::string_view msg) { return {Code::kIsDirectory, msg}; }
  static Status NotEmpty(std::string_view msg) { return {Code::kNotEmpty, msg}; }
  static Status Invalid(std::string_view msg) { return {Code::kInvalid, msg}; }
  static Status NoSpace(std::string_view msg) { return {Code::kNoSpace, msg}; }
  static Status NameTooLong(std::string_view msg) { return {Code::kNameTooLong, msg}; }
  static Status NoData(std::string_view msg) { return {Code::kNoData, msg}; }
  static Status Range(std::string_view msg) { return {Code::kRange, msg}; }
  static Status NotSupported(std::string_view msg) { return {Code::kNotSupported, msg}; }
  static Status Permission(std::string_view msg) { return {Code::kPermission, msg}; }
  static Status Busy(std::string_view msg) { return {Code::kBusy, msg}; }
  static Status Corruption(std::string_view msg) { return {Code::kCorruption, msg}; }
  // `context` names what was being done (a path, an offset); `err` is an errno.
  static Status IOError(std::string_view context, int err);
  static Status IOError(std::string_view msg) { return {Code::kIOError, msg}; }
  static Status ReadOnly(std::string_view msg) { return {Code::kReadOnly, msg}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsNoSpace() const { return code_ == Code::kNoSpace; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  bool IsReadOnly() const { return code_ == Code::kReadOnly; }
  const std::string& message() const { return message_; }
  // "Corruption: <message>", for logs and error output.
  std::string ToString() const;

  // Prefixes the message with more context, keeping the code.
  Status WithContext(std::string_view context) const;

 private:
  Status(Code code, std::string_view msg) : code_(code), message_(msg) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// A value of type T, or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "a Result built from a Status must carry an error");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace ckptfs

// Returns early from the enclosing function when `expr` yields a failed Status.
#define CKPTFS_RETURN_IF_ERROR(expr)        \
  do {                                      \
    ::ckptfs::Status _st = (expr);          \
    if (!_st.ok()) return _st;              \
  } while (0)

#define CKPTFS_CONCAT_INNER(a, b) a##b
#define CKPTFS_CONCAT(a, b) CKPTFS_CONCAT_INNER(a, b)
// `CKPTFS_ASSIGN_OR_RETURN(auto x, F())`: binds the value or returns the error.
#define CKPTFS_ASSIGN_OR_RETURN(lhs, expr) \
  CKPTFS_ASSIGN_OR_RETURN_IMPL(CKPTFS_CONCAT(_res_, __LINE__), lhs, expr)
#define CKPTFS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
