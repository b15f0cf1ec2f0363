// MountDeviceAt, MountSource and MountOfSource: lines of /proc/self/mountinfo, as
// "ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPEROPTIONS".
#include "mountinfo.h"

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

std::optional<std::string> MountDeviceAt(const std::string& path) {
  char resolved[PATH_MAX];
  if (!realpath(path.c_str(), resolved)) return std::nullopt;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::optional<std::string> device;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    if (Unescape(point) == resolved) device = dev;  // later lines are mounted on top
  }
  return device;
}

std::string MountSource(const std::string& store) {
  char resolved[PATH_MAX];
  return std::string("ckptfs:") + (realpath(store.c_str(), resolved) ? resolved : store.c_str());
}

std::optional<SourceMount> MountOfSource(const std::string& source) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point, options, word;
    fields >> id >> parent >> dev >> root >> point >> options;
    while (fields >> word && word != "-") {
    }
    std::string fstype, mounted_source;
    fields >> fstype >> mounted_source;
    if (Unescape(mounted_source) == source) {
      // The per-mount options start with "ro" or "rw".
      return SourceMount{Unescape(point), options == "ro" || options.rfind("ro,", 0) == 0};
    }
  }
  return std::nullopt;
}

}  // namespace ckptfs
