// CallerInGroup, CallerHasCapFsetid: see caller.h.
#include "caller.h"

#include <linux/capability.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace ckptfs {

bool CallerInGroup(fuse_req_t req, gid_t gid) {
  if (fuse_req_ctx(req)->gid == gid) return true;
  std::vector<gid_t> groups(64);
  int n = fuse_req_getgroups(req, static_cast<int>(groups.size()), groups.data());
  if (n > static_cast<int>(groups.size())) {
    groups.resize(static_cast<size_t>(n));
    n = fuse_req_getgroups(req, n, groups.data());
  }
  for (int i = 0; i < n && i < static_cast<int>(groups.size()); ++i) {
    if (groups[static_cast<size_t>(i)] == gid) return true;
  }
  return false;
}

bool CallerHasCapFsetid(fuse_req_t req) {
  const fuse_ctx* who = fuse_req_ctx(req);
  if (who->pid > 0) {
    std::ifstream status("/proc/" + std::to_string(who->pid) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("CapEff:", 0) != 0) continue;
      const uint64_t caps = std::strtoull(line.c_str() + 7, nullptr, 16);
      return (caps >> CAP_FSETID) & 1;
    }
  }
  return who->uid == 0;
}

}  // namespace ckptfs
