// PendingLog: the records applied in memory but not yet committed, in the
// order they were applied, each with a sequence number.
//
// A write to a compressing file is applied in memory before its stored
// location is known (the compressor threads place it later), so its record
// cannot be encoded yet. It reserves its place instead, and is filled in
// when the run is placed. A commit takes only the prefix of filled places:
// the log therefore always holds a prefix of the operations in the order
// they happened, with or without compression, so that after a crash a file
// renamed over another after a write is never found without that write.
//
// Not thread-safe: the Journal guards it with its namespace lock.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

#include "log/record.h"

namespace ckptfs {

class PendingLog {
 public:
  // The sequence number the next record or place will get.
  uint64_t next_seq() const { return last_seq_ + 1; }
  uint64_t last_seq() const { return last_seq_; }
  // The last sequence number TakeReady would reach now.
  uint64_t ready_seq() const;
  // Bytes of filled records waiting for a commit.
  size_t ready_bytes() const { return ready_bytes_; }
  bool has_reserved() const { return !reserved_.empty(); }

  // Appends `r`; returns its sequence number.
  uint64_t Append(const Record& r);
  // Reserves the next place for `key` (unique among reserved places).
  uint64_t Reserve(uint64_t key);
  // Fills the place reserved for `key` with encoded records; false when no
  // place is reserved for it (a bug in the caller).
  bool Fill(uint64_t key, std::string encoded);
  // The sequence number of the place reserved for `key`, if one is.
  std::optional<uint64_t> ReservedSeq(uint64_t key) const;

  // Moves the longest prefix with no unfilled place into *out (appending)
  // and returns the sequence number of its last record: everything up to it
  // is in *out or was taken before.
  uint64_t TakeReady(std::string* out);

 private:
  struct Chunk {
    std::string bytes;
    uint64_t last_seq = 0;
    bool reserved = false;  // a place not yet filled
  };

  std::deque<Chunk> chunks_;  // deque: references stay valid as it grows
  std::unordered_map<uint64_t, Chunk*> reserved_;  // by key
  uint64_t last_seq_ = 0;
  uint64_t taken_seq_ = 0;
  size_t ready_bytes_ = 0;
};

}  // namespace ckptfs
