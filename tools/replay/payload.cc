// splitmix64's finaliser over the word index: a bijection, so words never
// repeat within a file, and a fraction of a ns a word (vectorised) keeps
// generation far above disk speed.
#include "payload.h"

#include <algorithm>
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

// Function multiversioning picks a clone through an ifunc resolver that runs
// before ThreadSanitizer's runtime is up, which crashes a TSan build at load;
// and the clones named are x86's.
#if defined(__SANITIZE_THREAD__)
#define PAYLOAD_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PAYLOAD_UNDER_TSAN 1
#endif
#endif
#if defined(__x86_64__) && !defined(PAYLOAD_UNDER_TSAN)
#define PAYLOAD_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PAYLOAD_VECTOR_CLONES
#endif

// The payload's words from `first_word` on, one loop per kind so each is a
// straight line of independent words for the vectoriser. Built also for
// AVX-512 and AVX2 and chosen at load time: AVX-512 multiplies 64-bit lanes,
// which makes the words about five times faster than one at a time on the
// machines we run.
PAYLOAD_VECTOR_CLONES
void ShapedWords(PayloadKind kind, uint64_t seed, uint64_t first_word, std::span<uint64_t> out) {
  switch (kind) {
    case PayloadKind::kBf16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = Bf16Shape(WordAt(seed, first_word + i));
      return;
    case PayloadKind::kFp32:
      for (size_t i = 0; i < out.size(); ++i) out[i] = Fp32Shape(WordAt(seed, first_word + i));
      return;
    default:
      for (size_t i = 0; i < out.size(); ++i) out[i] = WordAt(seed, first_word + i);
      return;
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
  // Whole words are made a block at a time into an aligned array and then
  // copied out: a loop the compiler can vectorise, where a word-by-word copy
  // to an unaligned destination held generation to a quarter of that speed,
  // and generation is what a verifying reader spends most of its time on.
  constexpr size_t kBlockWords = 512;
  alignas(64) uint64_t words[kBlockWords];
  size_t skip = file_offset % 8;  // bytes of the first word that precede `out`
  uint64_t word = file_offset / 8;
  for (size_t done = 0; done < out.size();) {
    const size_t n = std::min(kBlockWords, (skip + out.size() - done + 7) / 8);
    ShapedWords(kind_, seed_, word, std::span<uint64_t>(words, n));
    const size_t take = std::min(n * 8 - skip, out.size() - done);
    std::memcpy(out.data() + done, reinterpret_cast<const std::byte*>(words) + skip, take);
    done += take;
    word += n;
    skip = 0;
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
