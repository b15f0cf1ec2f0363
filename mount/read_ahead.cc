// SetMountReadAhead implementation.
#include "read_ahead.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ckptfs {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out.push_back(static_cast<char>(std::strtol(s.substr(i + 1, 3).c_str(), nullptr, 8)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

Status SetMountReadAhead(const std::string& mountpoint, unsigned kilobytes) {
  char resolved[PATH_MAX];
  if (!realpath(mountpoint.c_str(), resolved)) return Status::IOError("realpath " + mountpoint, errno);
  std::ifstream in("/proc/self/mountinfo");
  std::string line, device;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    if (Unescape(point) == resolved) device = dev;  // the last mount on it wins
  }
  if (device.empty()) return Status::NotFound(std::string(resolved) + " is not in mountinfo");
  const std::string knob = "/sys/class/bdi/" + device + "/read_ahead_kb";
  std::ofstream out(knob);
  out << kilobytes << "\n";
  out.flush();
  if (!out) return Status::IOError("write " + knob, errno ? errno : EACCES);
  return Status::Ok();
}

}  // namespace ckptfs
