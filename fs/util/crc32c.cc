// CRC32C: hardware path (SSE4.2) and a table fallback.
//
// The crc32 instruction has a latency of three cycles and a throughput of
// one, so a single stream runs at a third of what the core can do; a
// restore spent 15% of the daemon's CPU here. Long inputs are cut into
// three blocks checksummed in one interleaved loop, then combined: the CRC
// register is linear over GF(2), so the register after A||B is the register
// after A advanced over |B| zero bytes, xor the register of B alone. The
// advance by one block is a constant linear map, tabulated at compile time.
#include "util/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

namespace ckptfs::crc32c {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78;  // reflected Castagnoli

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

// Bytes per interleaved block: long enough that combining costs nothing,
// short enough that 1 MiB runs are nearly all interleaved.
constexpr size_t kBlock = 8192;

// A linear map on the 32-bit register over GF(2): column b is the image of
// bit b.
using Gf2Matrix = std::array<uint32_t, 32>;

constexpr uint32_t Apply(const Gf2Matrix& m, uint32_t v) {
  uint32_t out = 0;
  for (int b = 0; b < 32; ++b) {
    if (v & (1u << b)) out ^= m[b];
  }
  return out;
}

// `outer` after `inner`.
constexpr Gf2Matrix Compose(const Gf2Matrix& outer, const Gf2Matrix& inner) {
  Gf2Matrix m{};
  for (int b = 0; b < 32; ++b) m[b] = Apply(outer, inner[b]);
  return m;
}

// The raw register advanced over n zero bytes, by repeated squaring of the
// one-byte map: log2(n) compositions instead of n steps per column, which
// keeps the evaluation within clang's constexpr step limit.
constexpr Gf2Matrix ZeroBytes(size_t n) {
  Gf2Matrix one_byte{};
  Gf2Matrix result{};
  for (int b = 0; b < 32; ++b) {
    uint32_t r = 1u << b;
    one_byte[b] = kTable[r & 0xFF] ^ (r >> 8);
    result[b] = r;
  }
  for (; n > 0; n >>= 1) {
    if (n & 1) result = Compose(one_byte, result);
    one_byte = Compose(one_byte, one_byte);
  }
  return result;
}

// The advance over kBlock zero bytes as four byte tables (the map is
// linear, so it is the xor of its values on each byte).
constexpr std::array<std::array<uint32_t, 256>, 4> MakeShiftTables() {
  const Gf2Matrix basis = ZeroBytes(kBlock);
  std::array<std::array<uint32_t, 256>, 4> tables{};
  for (int k = 0; k < 4; ++k) {
    for (uint32_t v = 0; v < 256; ++v) tables[k][v] = Apply(basis, v << (8 * k));
  }
  return tables;
}

constexpr std::array<std::array<uint32_t, 256>, 4> kShift = MakeShiftTables();

inline uint32_t ShiftBlock(uint32_t r) {
  return kShift[0][r & 0xFF] ^ kShift[1][(r >> 8) & 0xFF] ^ kShift[2][(r >> 16) & 0xFF] ^
         kShift[3][r >> 24];
}

uint32_t ExtendPortable(uint32_t crc, const uint8_t* p, size_t n) {
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; ++i) c = kTable[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return ~c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc, const uint8_t* p,
                                                            size_t n) {
  uint64_t c = static_cast<uint32_t>(~crc);
  while (n >= 3 * kBlock) {
    uint64_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < kBlock; i += 8) {
      uint64_t w0, w1, w2;
      std::memcpy(&w0, p + i, 8);
      std::memcpy(&w1, p + kBlock + i, 8);
      std::memcpy(&w2, p + 2 * kBlock + i, 8);
      c = _mm_crc32_u64(c, w0);
      c1 = _mm_crc32_u64(c1, w1);
      c2 = _mm_crc32_u64(c2, w2);
    }
    c = ShiftBlock(ShiftBlock(static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c1)) ^
        static_cast<uint32_t>(c2);
    p += 3 * kBlock;
    n -= 3 * kBlock;
  }
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n > 0) {
    c32 = _mm_crc32_u8(c32, *p++);
    --n;
  }
  return ~c32;
}

bool CpuHasSse42() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & bit_SSE4_2) != 0;
}
#endif

}  // namespace

uint32_t Extend(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  static const bool kHardware = CpuHasSse42();  // immutable once computed
  if (kHardware) return ExtendHardware(crc, p, n);
#endif
  return ExtendPortable(crc, p, n);
}

}  // namespace ckptfs::crc32c
