// DirCookieOf: a directory entry's readdir position, made from its name.
//
// A position that follows the name rather than the order of insertion is
// what keeps a directory walk finite while its entries are renamed: an
// entry renamed away and back (generic/736 renames each entry it reads to
// a temporary name and back) returns to the position it had, behind the
// reader, instead of moving past the reader's end for ever. Every entry
// that exists throughout a walk is seen exactly once, as on ext4 (whose
// positions are name hashes too); an entry added or renamed during it may
// or may not be seen, as POSIX allows.
//
// Positions are FUSE offsets (off_t, so below 2^63), 0, 1 and 2 belong to
// the start, "." and "..", and two names of one directory may hash alike:
// Namespace::AddEntry probes upward from the hash to the first free
// position. Positions live only in memory; being a function of the name,
// they are the same after a remount but for such collisions.
#pragma once

#include <cstdint>
#include <string_view>

namespace ckptfs {

inline constexpr uint64_t kFirstEntryCookie = 3;
inline constexpr uint64_t kCookieLimit = uint64_t{1} << 63;  // first position past the last

// FNV-1a over the name, then a 64-bit finalizer (splitmix64's) so that
// names differing in their last byte land far apart, folded into
// [kFirstEntryCookie, kCookieLimit).
inline uint64_t DirCookieOf(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return kFirstEntryCookie + h % (kCookieLimit - kFirstEntryCookie);
}

// The position after `cookie` in probing order, wrapping at the limit.
inline uint64_t NextDirCookie(uint64_t cookie) {
  return cookie + 1 < kCookieLimit ? cookie + 1 : kFirstEntryCookie;
}

}  // namespace ckptfs
