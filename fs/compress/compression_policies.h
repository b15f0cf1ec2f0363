// CompressionPolicies: which compression applies to writes of a file. The
// mount sets a default (-o compress=); a file's or directory's xattr
// user.ckptfs.compress overrides it and is inherited by what is created
// below. Values are parsed once each and remembered, not on every write.
#pragma once

#include <string>
#include <unordered_map>

#include "compress/extent_codec.h"
#include "meta/inode.h"
#include "util/mutex.h"

namespace ckptfs {

inline constexpr const char* kCompressXattr = "user.ckptfs.compress";

class CompressionPolicies {
 public:
  explicit CompressionPolicies(const CompressionPolicy& mount_default)
      : mount_default_(mount_default) {}

  // The policy for writes to `node`. A value this version cannot parse
  // (SetXattr validates, so only a log written by another version holds
  // one) falls back to the mount's, with a warning once.
  CompressionPolicy For(const Inode& node) EXCLUDES(mu_);

 private:
  const CompressionPolicy mount_default_;
  Mutex mu_;
  std::unordered_map<std::string, CompressionPolicy> parsed_ GUARDED_BY(mu_);  // by xattr value
};

}  // namespace ckptfs
