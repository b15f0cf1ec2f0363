// splitmix64's finaliser over the word index: a bijection, so words never
// repeat within a file, and ~1 ns a word keeps generation well above disk speed.
#include "payload.h"

#include <cstring>

namespace ckptfs::replay {
namespace {

inline uint64_t Mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t WordAt(uint64_t seed, uint64_t word_index) { return Mix(seed ^ word_index); }

// An exponent (biased, as in IEEE floats) from 8 random bits: 123 (2^-4)
// half of the time, each octave below half as often, like |x| of N(0, 0.02).
inline uint64_t Exponent(uint64_t eight_bits) {
  return 123 - static_cast<uint64_t>(__builtin_ctzll(eight_bits | 0x100));
}

// Four bf16 values from 64 random bits: sign and 7 mantissa bits random.
inline uint64_t Bf16Shape(uint64_t r) {
  uint64_t out = 0;
  for (int i = 0; i < 4; ++i) {
    const uint64_t b = (r >> (16 * i)) & 0xFFFF;
    const uint64_t elem = (b >> 15) << 15 | Exponent(b & 0xFF) << 7 | ((b >> 8) & 0x7F);
    out |= elem << (16 * i);
  }
  return out;
}

// Two fp32 values from 64 random bits: sign and 23 mantissa bits random.
inline uint64_t Fp32Shape(uint64_t r) {
  uint64_t out = 0;
  for (int i = 0; i < 2; ++i) {
    const uint64_t b = (r >> (32 * i)) & 0xFFFFFFFF;
    const uint64_t elem = (b >> 31) << 31 | Exponent(b & 0xFF) << 23 | ((b >> 8) & 0x7FFFFF);
    out |= elem << (32 * i);
  }
  return out;
}

inline uint64_t Shape(PayloadKind kind, uint64_t r) {
  switch (kind) {
    case PayloadKind::kBf16: return Bf16Shape(r);
    case PayloadKind::kFp32: return Fp32Shape(r);
    default: return r;
  }
}

}  // namespace

std::string_view PayloadKindName(PayloadKind kind) {
  switch (kind) {
    case PayloadKind::kZeros: return "zeros";
    case PayloadKind::kBf16: return "bf16";
    case PayloadKind::kFp32: return "fp32";
    default: return "random";
  }
}

Result<PayloadKind> ParsePayloadKind(std::string_view name) {
  for (PayloadKind kind :
       {PayloadKind::kRandom, PayloadKind::kZeros, PayloadKind::kBf16, PayloadKind::kFp32}) {
    if (name == PayloadKindName(kind)) return kind;
  }
  return Status::Invalid("payload must be random, zeros, bf16 or fp32, not '" + std::string(name) +
                         "'");
}

uint64_t FileSeed(std::string_view relative_path) {
  uint64_t hash = 0xCBF29CE484222325ull;  // FNV-1a, then mixed to spread short names
  for (char c : relative_path) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001B3ull;
  }
  return Mix(hash);
}

void PayloadPattern::Fill(uint64_t file_offset, std::span<std::byte> out) const {
  if (kind_ == PayloadKind::kZeros) {
    std::memset(out.data(), 0, out.size());
    return;
  }
  std::byte* dst = out.data();
  size_t remaining = out.size();
  uint64_t word = file_offset / 8;
  size_t skip = file_offset % 8;
  if (skip != 0 && remaining > 0) {  // partial leading word
    uint64_t value = Shape(kind_, WordAt(seed_, word++));
    size_t take = std::min(remaining, 8 - skip);
    std::memcpy(dst, reinterpret_cast<const std::byte*>(&value) + skip, take);
    dst += take;
    remaining -= take;
  }
  while (remaining >= 8) {
    uint64_t value = Shape(kind_, WordAt(seed_, word++));
    std::memcpy(dst, &value, 8);
    dst += 8;
    remaining -= 8;
  }
  if (remaining > 0) {
    uint64_t value = Shape(kind_, WordAt(seed_, word));
    std::memcpy(dst, &value, remaining);
  }
}

std::optional<uint64_t> PayloadPattern::FindMismatch(uint64_t file_offset,
                                                     std::span<const std::byte> data,
                                                     std::span<std::byte> scratch) const {
  for (size_t at = 0; at < data.size(); at += scratch.size()) {
    std::span<const std::byte> block = data.subspan(at, std::min(scratch.size(), data.size() - at));
    std::span<std::byte> expected = scratch.first(block.size());
    Fill(file_offset + at, expected);
    if (std::memcmp(expected.data(), block.data(), block.size()) == 0) continue;
    for (size_t i = 0; i < block.size(); ++i) {
      if (expected[i] != block[i]) return file_offset + at + i;
    }
  }
  return std::nullopt;
}

}  // namespace ckptfs::replay
