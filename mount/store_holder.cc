// FlockHolder reads /proc/locks, whose lines are
//   "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE START END"
// with the device numbers in hex and the inode in decimal.
#include "store_holder.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace ckptfs {

std::optional<pid_t> FlockHolder(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  char want[64];
  std::snprintf(want, sizeof want, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string index, kind, advisory, access, file;
    long pid = 0;
    fields >> index >> kind;
    if (kind == "->") fields >> kind;  // a waiter, listed under the holder
    fields >> advisory >> access >> pid >> file;
    if (kind == "FLOCK" && file == want && pid > 0) return static_cast<pid_t>(pid);
  }
  return std::nullopt;
}

std::string DescribeProcess(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return "pid " + std::to_string(pid) + (name.empty() ? "" : " (" + name + ")");
}

}  // namespace ckptfs
