// MountAt, MountDeviceAt, MountSource and MountOfSource: lines of /proc/self/mountinfo, as
// "ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPEROPTIONS".
#include "mountinfo.h"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

namespace ckptfs {
namespace {

constexpr char kSourcePrefix[] = "ckptfs:";

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

// Calls `each` with every mount, in mount order, until it returns false.
void ForEachMount(const std::function<bool(const MountEntry&)>& each) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, root, point, word, source;
    MountEntry e;
    fields >> id >> parent >> e.device >> root >> point >> e.options;
    while (fields >> word && word != "-") {
    }
    fields >> e.fstype >> source >> e.super_options;
    e.point = Unescape(point);
    e.source = Unescape(source);
    if (!each(e)) return;
  }
}

}  // namespace

std::optional<MountEntry> MountAt(const std::string& path) {
  char resolved[PATH_MAX];
  if (!realpath(path.c_str(), resolved)) return std::nullopt;
  std::optional<MountEntry> found;
  ForEachMount([&](const MountEntry& e) {
    if (e.point == resolved) found = e;  // later lines are mounted on top
    return true;
  });
  return found;
}

std::optional<std::string> MountDeviceAt(const std::string& path) {
  auto mount = MountAt(path);
  if (!mount) return std::nullopt;
  return mount->device;
}

std::string MountSource(const std::string& store) {
  if (store.rfind(kSourcePrefix, 0) == 0) return store;
  char resolved[PATH_MAX];
  return std::string(kSourcePrefix) + (realpath(store.c_str(), resolved) ? resolved : store.c_str());
}

std::string StoreOfSource(const std::string& source) {
  return source.rfind(kSourcePrefix, 0) == 0 ? source.substr(sizeof kSourcePrefix - 1) : source;
}

std::optional<SourceMount> MountOfSource(const std::string& source) {
  std::optional<SourceMount> found;
  ForEachMount([&](const MountEntry& e) {
    if (e.source != source) return true;
    found = SourceMount{e.point, e.read_only()};
    return false;
  });
  return found;
}

}  // namespace ckptfs
