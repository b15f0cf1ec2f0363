// Test data shaped like model tensors, for the compression tests: values
// of a normal distribution (as trained weights are) in bf16, so the exponent
// byte of every element repeats and byte grouping pays off.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

namespace ckptfs::testing {

// n bytes of bf16 elements (an odd last byte is a fixed filler).
inline std::string Bf16Like(size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::string out(n, '\0');
  for (size_t i = 0; i + 1 < n; i += 2) {
    const float f = dist(gen);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const uint16_t half = static_cast<uint16_t>(bits >> 16);  // bf16: fp32's top half
    std::memcpy(&out[i], &half, 2);
  }
  if (n % 2) out[n - 1] = 0x3c;
  return out;
}

}  // namespace ckptfs::testing
