// ExtentMap: a file's logical byte ranges and where each one is stored.
//
// Entries never overlap. Writing a range replaces whatever mapped it, trimming
// neighbours; unmapped ranges are holes that read as zeros. Each entry points
// into a PhysicalExtent (the stored run whose checksum reads verify) at
// `skip` bytes from its start, so trimming never rewrites stored data.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "log/record.h"

namespace ckptfs {

struct MappedExtent {
  uint64_t length = 0;
  PhysicalExtent phys;
  uint32_t skip = 0;
  bool operator==(const MappedExtent&) const = default;
};

// One piece of a lookup: a hole or mapped bytes. A hole reads as zeros: it
// is unmapped, or space fallocate reserved (phys.reserved()).
struct ExtentPiece {
  uint64_t offset;  // file offset
  uint64_t length;
  bool hole;
  PhysicalExtent phys;
  uint32_t skip;  // offset of this piece's first byte within phys
};

class ExtentMap {
 public:
  // Told about every mapped byte range that stops being referenced: `bytes`
  // from `skip` bytes into `phys`.
  using ReleaseFn = std::function<void(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes)>;

  // Maps [offset, offset + extent.length). `release` sees what it displaces.
  void Insert(uint64_t offset, const MappedExtent& extent, const ReleaseFn& release);
  // Drops every byte at or beyond `size`.
  void Truncate(uint64_t size, const ReleaseFn& release);
  // Unmaps [offset, offset + length): a hole that reads as zeros.
  void PunchHole(uint64_t offset, uint64_t length, const ReleaseFn& release);
  // Drops everything (the file is being freed).
  void Clear(const ReleaseFn& release) { Truncate(0, release); }

  // Pieces covering [offset, offset + length), holes included, in order.
  std::vector<ExtentPiece> Lookup(uint64_t offset, uint64_t length) const;

  uint64_t mapped_bytes() const { return mapped_bytes_; }
  // Bytes of space fallocate reserved (PhysicalExtent::reserved()).
  uint64_t reserved_bytes() const { return reserved_bytes_; }
  // Device bytes the mapped ranges stand for (PhysicalExtent::StoredShare);
  // below mapped_bytes() when runs are compressed.
  uint64_t stored_bytes() const { return stored_bytes_; }
  size_t entry_count() const { return entries_.size(); }
  const std::map<uint64_t, MappedExtent>& entries() const { return entries_; }

 private:
  // Removes all mapping in [start, end), keeping the parts of entries outside it.
  void Punch(uint64_t start, uint64_t end, const ReleaseFn& release);
  void Add(uint64_t offset, const MappedExtent& e);
  std::map<uint64_t, MappedExtent>::iterator Remove(std::map<uint64_t, MappedExtent>::iterator it);

  std::map<uint64_t, MappedExtent> entries_;  // keyed by file offset
  uint64_t mapped_bytes_ = 0;
  uint64_t reserved_bytes_ = 0;
  uint64_t stored_bytes_ = 0;  // sum of the entries' shares, kept exact
};

}  // namespace ckptfs
