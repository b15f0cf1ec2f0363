// Payload: the bytes ckpt-replay writes, reproducible from (file, offset) alone.
//
// Each 8-byte word at file offset 8*w is splitmix64(seed ^ w), so any block of
// any file can be regenerated and checked without reading the rest, and the
// data does not compress (a filesystem that compresses or dedups cannot
// flatter itself). kZeros mimics DLIO, whose tensors are all zero. kBf16 and
// kFp32 shape the same random bits like trained weights (random sign and
// mantissa, exponents falling off by half per octave below 2^-4), so they
// compress as real bf16 and fp32 checkpoints do (about 1.5 and 1.2 with
// byte grouping): what a compressing store must be measured with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ckptfs/status.h"

namespace ckptfs::replay {

enum class PayloadKind { kRandom, kZeros, kBf16, kFp32 };
std::string_view PayloadKindName(PayloadKind kind);
Result<PayloadKind> ParsePayloadKind(std::string_view name);

// Seed for a file, from its path relative to the run directory, so the same
// run under another directory produces the same bytes.
uint64_t FileSeed(std::string_view relative_path);

class PayloadPattern {
 public:
  PayloadPattern(PayloadKind kind, uint64_t file_seed) : kind_(kind), seed_(file_seed) {}

  void Fill(uint64_t file_offset, std::span<std::byte> out) const;
  // Offset (within the file) of the first byte of `data` that differs from
  // the pattern, or nullopt when all match. The expected bytes are made a
  // few KiB at a time and compared where they are made, so verifying reads
  // the data once and writes nothing.
  std::optional<uint64_t> FindMismatch(uint64_t file_offset, std::span<const std::byte> data) const;

 private:
  PayloadKind kind_;
  uint64_t seed_;
};

}  // namespace ckptfs::replay
