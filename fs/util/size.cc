// ParseSize implementation.
#include "util/size.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace ckptfs {

Result<uint64_t> ParseSize(const std::string& text) {
  // strtoull takes a sign and negates: "-1" would be 2^64 - 1.
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) {
    return Status::Invalid("not a size: " + text);
  }
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || errno != 0) return Status::Invalid("not a size: " + text);
  uint64_t mult = 1;
  std::string suffix(end);
  if (suffix == "" || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "KiB" || suffix == "k") mult = 1ull << 10;
  else if (suffix == "M" || suffix == "MiB") mult = 1ull << 20;
  else if (suffix == "G" || suffix == "GiB") mult = 1ull << 30;
  else if (suffix == "T" || suffix == "TiB") mult = 1ull << 40;
  else return Status::Invalid("not a size: " + text + " (use a number with K, M, G or T)");
  if (v > UINT64_MAX / mult) return Status::Invalid("size too large: " + text);
  return static_cast<uint64_t>(v) * mult;
}

}  // namespace ckptfs
