// CompressionPolicies implementation.
#include "compress/compression_policies.h"

#include <spdlog/spdlog.h>

namespace ckptfs {
namespace {

// Distinct values are a handful per store; a bound keeps a foreign log
// full of odd values from growing the map without end.
constexpr size_t kMaxRemembered = 256;

}  // namespace

CompressionPolicy CompressionPolicies::For(const Inode& node) {
  auto it = node.xattrs.find(kCompressXattr);
  if (it == node.xattrs.end()) return mount_default_;
  MutexLock lock(&mu_);
  if (auto known = parsed_.find(it->second); known != parsed_.end()) return known->second;
  CompressionPolicy policy = mount_default_;
  if (auto parsed = ParseCompressionPolicy(it->second); parsed.ok()) {
    policy = *parsed;
  } else {
    spdlog::warn("inode {}: ignoring {}={}: {}", node.ino, kCompressXattr, it->second,
                 parsed.status().ToString());
  }
  if (parsed_.size() >= kMaxRemembered) parsed_.clear();
  parsed_.emplace(it->second, policy);
  return policy;
}

}  // namespace ckptfs
