// Payload: reproducible per (file, offset), verifiable in any slice, and not
// trivially compressible.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "payload.h"

namespace ckptfs::replay {
namespace {

std::vector<std::byte> Generate(const PayloadPattern& pattern, uint64_t offset, size_t length) {
  std::vector<std::byte> out(length);
  pattern.Fill(offset, out);
  return out;
}

TEST(Payload, AnySliceEqualsTheSameBytesOfTheWholeFile) {
  PayloadPattern pattern(PayloadKind::kRandom, FileSeed("global_epoch1_step1/a.pt"));
  std::vector<std::byte> whole = Generate(pattern, 0, 16384);
  // Lengths past 4 KiB cross the generator's blocks of words.
  for (uint64_t offset : {0u, 1u, 7u, 8u, 13u, 640u, 4000u, 4093u}) {
    for (size_t length : {1u, 3u, 8u, 9u, 57u, 4096u, 9001u}) {
      std::vector<std::byte> slice = Generate(pattern, offset, length);
      ASSERT_EQ(std::memcmp(slice.data(), whole.data() + offset, length), 0) << offset << "+" << length;
    }
  }
}

// The bytes are part of what ckpt-replay promises: a store written by one
// build verifies under another, so a faster generator must make these same
// words (pinned from the word-at-a-time generator), at an unaligned offset.
TEST(Payload, EveryKindMakesThePinnedBytes) {
  const uint64_t seed = FileSeed("global_step1/layer_00-model_00-model_states.pt");
  const struct {
    PayloadKind kind;
    uint64_t words[2];
  } pinned[] = {{PayloadKind::kRandom, {0x8600ce50ac09b0ebull, 0x7a6e8beecb9abf7dull}},
                {PayloadKind::kBf16, {0x7d3d003cd03b89bdull, 0x373deebdeebd9a3dull}},
                {PayloadKind::kFp32, {0x7d86003bd0ac09bdull, 0xb77a6ebdeecb9a3dull}}};
  for (const auto& expect : pinned) {
    std::vector<std::byte> bytes = Generate(PayloadPattern(expect.kind, seed), 1000003, 16);
    uint64_t words[2];
    std::memcpy(words, bytes.data(), sizeof(words));
    EXPECT_EQ(words[0], expect.words[0]) << PayloadKindName(expect.kind);
    EXPECT_EQ(words[1], expect.words[1]) << PayloadKindName(expect.kind);
  }
}

TEST(Payload, DifferentFilesGetDifferentBytes) {
  PayloadPattern a(PayloadKind::kRandom, FileSeed("x/layer_1.pt"));
  PayloadPattern b(PayloadKind::kRandom, FileSeed("x/layer_2.pt"));
  EXPECT_NE(Generate(a, 0, 64), Generate(b, 0, 64));
}

TEST(Payload, WordsDoNotRepeatWithinAMegabyte) {
  PayloadPattern pattern(PayloadKind::kRandom, FileSeed("f"));
  std::vector<std::byte> data = Generate(pattern, 0, 1 << 20);
  std::set<uint64_t> words;
  for (size_t i = 0; i < data.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, data.data() + i, 8);
    words.insert(word);
  }
  EXPECT_EQ(words.size(), data.size() / 8);
}

TEST(Payload, FindMismatchReportsTheCorruptedOffset) {
  PayloadPattern pattern(PayloadKind::kRandom, FileSeed("f"));
  std::vector<std::byte> data = Generate(pattern, 1000, 5000);
  EXPECT_FALSE(pattern.FindMismatch(1000, data).has_value());
  data[1234] ^= std::byte{0x01};
  std::optional<uint64_t> bad = pattern.FindMismatch(1000, data);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(*bad, 1000u + 1234u);
}

// The expected bytes are made 4 KiB at a time: a mismatch in any block, at
// either edge of one, and in the words cut at the start and the end of data
// that begins and ends mid-word, is found where it is.
TEST(Payload, FindMismatchFindsAFlippedByteAnywhere) {
  PayloadPattern pattern(PayloadKind::kBf16, FileSeed("f"));
  std::vector<std::byte> data = Generate(pattern, 7, 10000);
  EXPECT_FALSE(pattern.FindMismatch(7, data).has_value());
  for (size_t corrupt : {size_t{0}, size_t{1}, size_t{4088}, size_t{4089}, size_t{6000}, size_t{8184},
                         size_t{9999}}) {
    std::vector<std::byte> bad_data = data;
    bad_data[corrupt] ^= std::byte{0x80};
    EXPECT_EQ(pattern.FindMismatch(7, bad_data), std::optional<uint64_t>(7 + corrupt)) << corrupt;
  }
  // Two flips: the first is reported.
  std::vector<std::byte> twice = data;
  twice[5000] ^= std::byte{1};
  twice[9000] ^= std::byte{1};
  EXPECT_EQ(pattern.FindMismatch(7, twice), std::optional<uint64_t>(7 + 5000));
}

TEST(Payload, ZerosAreZerosAndVerifyAsSuch) {
  PayloadPattern zeros(PayloadKind::kZeros, FileSeed("f"));
  std::vector<std::byte> data = Generate(zeros, 5, 10000);
  for (std::byte b : data) ASSERT_EQ(b, std::byte{0});
  EXPECT_FALSE(zeros.FindMismatch(5, data).has_value());
  data[9999] = std::byte{1};
  EXPECT_EQ(zeros.FindMismatch(5, data), std::optional<uint64_t>(10004));
}

TEST(Payload, ParsesKindNames) {
  EXPECT_EQ(ParsePayloadKind("zeros").value(), PayloadKind::kZeros);
  EXPECT_EQ(ParsePayloadKind("random").value(), PayloadKind::kRandom);
  EXPECT_FALSE(ParsePayloadKind("ones").ok());
}

TEST(Payload, TensorShapedKindsAreReproducibleSlicesToo) {
  for (PayloadKind kind : {PayloadKind::kBf16, PayloadKind::kFp32}) {
    PayloadPattern pattern(kind, FileSeed("model_states.pt"));
    std::vector<std::byte> whole = Generate(pattern, 0, 4096);
    for (uint64_t offset : {0u, 1u, 6u, 13u, 4000u}) {
      std::vector<std::byte> slice = Generate(pattern, offset, 57);
      ASSERT_EQ(std::memcmp(slice.data(), whole.data() + offset, 57), 0) << offset;
    }
    EXPECT_EQ(*ParsePayloadKind(PayloadKindName(kind)), kind);
  }
  EXPECT_FALSE(ParsePayloadKind("fp64").ok());
}

// The bf16 payload looks like bf16 weights: every element's exponent is
// near 2^-4 (fp32: the same, in the high 9 bits of each 32-bit element).
TEST(Payload, TensorShapedKindsHaveWeightLikeExponents) {
  PayloadPattern bf16(PayloadKind::kBf16, FileSeed("w"));
  std::vector<std::byte> b = Generate(bf16, 0, 1 << 16);
  size_t near = 0;
  for (size_t i = 0; i + 1 < b.size(); i += 2) {
    uint16_t e;
    std::memcpy(&e, &b[i], 2);
    const unsigned exponent = (e >> 7) & 0xFF;
    ASSERT_LE(exponent, 123u);
    ASSERT_GE(exponent, 115u);
    near += exponent >= 121;
  }
  EXPECT_GT(near * 100, b.size() / 2 * 85);  // 1/2 + 1/4 + 1/8 of the elements expected
  PayloadPattern fp32(PayloadKind::kFp32, FileSeed("w"));
  std::vector<std::byte> f = Generate(fp32, 0, 1 << 16);
  for (size_t i = 0; i + 3 < f.size(); i += 4) {
    uint32_t e;
    std::memcpy(&e, &f[i], 4);
    ASSERT_LE((e >> 23) & 0xFF, 123u);
  }
}

}  // namespace
}  // namespace ckptfs::replay
