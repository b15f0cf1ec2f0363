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
// machines we run. The file is compiled with -ftree-vectorize for these
// loops (tools/replay/CMakeLists.txt), which GCC leaves scalar at -O2.
PAYLOAD_VECTOR_CLONES
void ShapedWords(PayloadKind kind, uint64_t seed, uint64_t first_word, std::span<uint64_t> out) {
  switch (kind) {
    case PayloadKind::kBf16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = Bf16Shape(WordAt(seed, first_word + i));
      return;
    case PayloadKind::kFp32:
      for (size_t i = 0; i < out.size(); ++i) out[i] = Fp32Shape(WordAt(seed, first_word + i));
      return;
    case PayloadKind::kZeros:
      std::fill(out.begin(), out.end(), 0);
      return;
    default:
      for (size_t i = 0; i < out.size(); ++i) out[i] = WordAt(seed, first_word + i);
      return;
  }
}

// Calls block(done, expected) with the expected bytes of [file_offset,
// file_offset + size), in order, a few KiB at a time, until it returns false.
// Whole words are made into an aligned array that stays in L1: a loop the
// compiler vectorises, where a word-by-word copy to an unaligned destination
// held generation to a quarter of that speed. A verifying reader compares
// against that array directly: made into a 1 MiB scratch and compared there,
// the expected bytes cost a copy more, and random payload verified at 11
// GB/s a core instead of 22 (docs/tuning.md#payload-verify-in-place).
template <typename Block>
void ForEachExpected(PayloadKind kind, uint64_t seed, uint64_t file_offset, size_t size, Block block) {
  constexpr size_t kBlockWords = 512;
  alignas(64) uint64_t words[kBlockWords];
  size_t skip = file_offset % 8;  // bytes of the first word before the range
  uint64_t word = file_offset / 8;
  for (size_t done = 0; done < size;) {
    const size_t n = std::min(kBlockWords, (skip + size - done + 7) / 8);
    ShapedWords(kind, seed, word, std::span<uint64_t>(words, n));
    const size_t take = std::min(n * 8 - skip, size - done);
    if (!block(done, std::span<const std::byte>(reinterpret_cast<const std::byte*>(words) + skip, take))) return;
    done += take;
    word += n;
    skip = 0;
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
  ForEachExpected(kind_, seed_, file_offset, out.size(), [&](size_t done, std::span<const std::byte> expected) {
    std::memcpy(out.data() + done, expected.data(), expected.size());
    return true;
  });
}

std::optional<uint64_t> PayloadPattern::FindMismatch(uint64_t file_offset, std::span<const std::byte> data) const {
  std::optional<uint64_t> bad;
  ForEachExpected(kind_, seed_, file_offset, data.size(), [&](size_t done, std::span<const std::byte> expected) {
    if (std::memcmp(expected.data(), data.data() + done, expected.size()) == 0) return true;
    size_t i = 0;
    while (expected[i] == data[done + i]) ++i;
    bad = file_offset + done + i;
    return false;
  });
  return bad;
}

}  // namespace ckptfs::replay
