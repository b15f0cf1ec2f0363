// Byte grouping for widths 2 and 4 (bf16/fp16 and fp32) runs on every
// compressed run at checkpoint-burst speed, so those widths have their own
// loops: one element is loaded as an integer and split with shifts, which
// GCC and Clang turn into SSE2 pack/unpack code. The loops work on fixed
// blocks of kBlock elements through local arrays, so the vectorizer needs
// neither an epilogue nor a runtime aliasing check and replaces the inner
// loop even under -O2's very-cheap cost model (RelWithDebInfo builds):
// measured 12-23 GB/s against 2-3 GB/s for the plain byte loop. Other widths
// take the plain loop: nothing in a checkpoint asks for them.
#include "compress/byte_group.h"

#include <bit>
#include <cstdint>
#include <cstring>

namespace ckptfs {
namespace {

constexpr bool kLittleEndian = std::endian::native == std::endian::little;

// Elements per inner block: a multiple of every vector width in use.
constexpr size_t kBlock = 64;

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

template <typename T>
void Store(char* p, T v) {
  std::memcpy(p, &v, sizeof(v));
}

// The generic forms, and the tail after the last whole kBlock.
void GroupGeneric(const char* in, size_t n, unsigned width, char* out) {
  for (size_t i = 0; i < n; ++i) {
    for (unsigned b = 0; b < width; ++b) out[b * n + i] = in[i * width + b];
  }
}

void UngroupGeneric(const char* in, size_t n, unsigned width, char* out) {
  for (size_t i = 0; i < n; ++i) {
    for (unsigned b = 0; b < width; ++b) out[i * width + b] = in[b * n + i];
  }
}

void Group2(const char* in, size_t n, char* out) {
  auto* lo = reinterpret_cast<uint8_t*>(out);
  auto* hi = lo + n;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint16_t v[kBlock];
    uint8_t l[kBlock], h[kBlock];
    std::memcpy(v, in + 2 * i, sizeof(v));
    for (size_t j = 0; j < kBlock; ++j) {
      l[j] = static_cast<uint8_t>(v[j]);
      h[j] = static_cast<uint8_t>(v[j] >> 8);
    }
    std::memcpy(lo + i, l, kBlock);
    std::memcpy(hi + i, h, kBlock);
  }
  for (; i < n; ++i) {
    uint16_t v = Load<uint16_t>(in + 2 * i);
    lo[i] = static_cast<uint8_t>(v);
    hi[i] = static_cast<uint8_t>(v >> 8);
  }
}

void Ungroup2(const char* in, size_t n, char* out) {
  auto* lo = reinterpret_cast<const uint8_t*>(in);
  auto* hi = lo + n;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint16_t v[kBlock];
    for (size_t j = 0; j < kBlock; ++j) {
      v[j] = static_cast<uint16_t>(lo[i + j] | (hi[i + j] << 8));
    }
    std::memcpy(out + 2 * i, v, sizeof(v));
  }
  for (; i < n; ++i) Store<uint16_t>(out + 2 * i, static_cast<uint16_t>(lo[i] | (hi[i] << 8)));
}

void Group4(const char* in, size_t n, char* out) {
  auto* b0 = reinterpret_cast<uint8_t*>(out);
  auto* b1 = b0 + n;
  auto* b2 = b1 + n;
  auto* b3 = b2 + n;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint32_t v[kBlock];
    uint8_t c0[kBlock], c1[kBlock], c2[kBlock], c3[kBlock];
    std::memcpy(v, in + 4 * i, sizeof(v));
    for (size_t j = 0; j < kBlock; ++j) {
      c0[j] = static_cast<uint8_t>(v[j]);
      c1[j] = static_cast<uint8_t>(v[j] >> 8);
      c2[j] = static_cast<uint8_t>(v[j] >> 16);
      c3[j] = static_cast<uint8_t>(v[j] >> 24);
    }
    std::memcpy(b0 + i, c0, kBlock);
    std::memcpy(b1 + i, c1, kBlock);
    std::memcpy(b2 + i, c2, kBlock);
    std::memcpy(b3 + i, c3, kBlock);
  }
  for (; i < n; ++i) {
    uint32_t v = Load<uint32_t>(in + 4 * i);
    b0[i] = static_cast<uint8_t>(v);
    b1[i] = static_cast<uint8_t>(v >> 8);
    b2[i] = static_cast<uint8_t>(v >> 16);
    b3[i] = static_cast<uint8_t>(v >> 24);
  }
}

void Ungroup4(const char* in, size_t n, char* out) {
  auto* b0 = reinterpret_cast<const uint8_t*>(in);
  auto* b1 = b0 + n;
  auto* b2 = b1 + n;
  auto* b3 = b2 + n;
  auto word = [&](size_t k) {
    return static_cast<uint32_t>(b0[k]) | static_cast<uint32_t>(b1[k]) << 8 |
           static_cast<uint32_t>(b2[k]) << 16 | static_cast<uint32_t>(b3[k]) << 24;
  };
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint32_t v[kBlock];
    for (size_t j = 0; j < kBlock; ++j) v[j] = word(i + j);
    std::memcpy(out + 4 * i, v, sizeof(v));
  }
  for (; i < n; ++i) Store<uint32_t>(out + 4 * i, word(i));
}

// Both directions share the shape: whole elements through the width's
// kernel, the trailing partial element copied as it is.
template <typename Kernel2, typename Kernel4, typename KernelAny>
void Transpose(const char* in, size_t len, unsigned width, char* out, Kernel2 two, Kernel4 four,
               KernelAny any) {
  const size_t n = len / width;  // whole elements
  const size_t whole = n * width;
  if (len == 0) return;
  if (width == 1 || n == 0) {
    std::memcpy(out, in, len);
    return;
  }
  if (kLittleEndian && width == 2) {
    two(in, n, out);
  } else if (kLittleEndian && width == 4) {
    four(in, n, out);
  } else {
    any(in, n, width, out);
  }
  std::memcpy(out + whole, in + whole, len - whole);
}

}  // namespace

void GroupBytes(const char* in, size_t len, unsigned width, char* out) {
  Transpose(in, len, width, out, Group2, Group4, GroupGeneric);
}

void UngroupBytes(const char* in, size_t len, unsigned width, char* out) {
  Transpose(in, len, width, out, Ungroup2, Ungroup4, UngroupGeneric);
}

}  // namespace ckptfs
