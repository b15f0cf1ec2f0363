// Helpers for tests that damage a store image on purpose: find where a
// file's bytes landed and flip one bit there.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace ckptfs::testing {

// Device offset of the first 4 KiB block at or after `from` that equals the
// first 4 KiB of `data`, or 0 if there is none.
inline uint64_t FindInImage(const std::string& image, const std::string& data, uint64_t from) {
  std::ifstream in(image, std::ios::binary);
  std::string block(4096, '\0');
  for (uint64_t off = from;; off += 4096) {
    in.seekg(static_cast<std::streamoff>(off));
    if (!in.read(block.data(), 4096)) return 0;
    if (block.compare(0, 4096, data, 0, 4096) == 0) return off;
  }
}

inline void FlipBit(const std::string& image, uint64_t offset) {
  std::fstream f(image, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  f.read(&c, 1);
  c ^= 0x08;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

}  // namespace ckptfs::testing
