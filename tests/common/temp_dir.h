// TempDir: a fresh directory under $TMPDIR (or /tmp) for one test, removed
// with everything in it when the test ends. Shared by every test suite.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ckptfs::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "ckptfs-test") {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
    char* made = ::mkdtemp(pattern.data());
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ckptfs::testing
