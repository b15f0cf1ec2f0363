// Byte grouping and the run codecs: exact inverses at every awkward size,
// the raw fallback, the filter kAuto picks for tensor-like data, rejection
// of stored bytes that do not decode to the extent's length, and the policy
// grammar.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compress/byte_group.h"
#include "compress/extent_codec.h"

namespace ckptfs {
namespace {

constexpr size_t kMiB = 1 << 20;

std::vector<char> RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<char> v(n);
  for (auto& c : v) c = static_cast<char>(rng());
  return v;
}

// Weights as a trained layer has them: normal, small, in float32.
std::vector<float> NormalFloats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> v(n);
  for (auto& f : v) f = dist(rng);
  return v;
}

std::vector<char> Fp32Like(size_t bytes, uint64_t seed) {
  std::vector<float> f = NormalFloats(bytes / 4 + 1, seed);
  std::vector<char> out(bytes);
  std::memcpy(out.data(), f.data(), bytes);
  return out;
}

// bf16 by truncation: the high half of each float32.
std::vector<char> Bf16Like(size_t bytes, uint64_t seed) {
  std::vector<float> f = NormalFloats(bytes / 2 + 1, seed);
  std::vector<char> out(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    uint16_t h = static_cast<uint16_t>(std::bit_cast<uint32_t>(f[i / 2]) >> 16);
    out[i] = static_cast<char>(i % 2 == 0 ? h & 0xff : h >> 8);
  }
  return out;
}

std::vector<char> Text(size_t n) {
  static const char kWords[] = "the quick brown fox jumps over the lazy dog; checkpoint ";
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = kWords[(i * 7 + i / 13) % (sizeof(kWords) - 1)];
  return v;
}

CompressionPolicy Zstd(int level, ByteFilter filter) {
  CompressionPolicy p;
  p.enabled = true;
  p.level = level;
  p.filter = filter;
  return p;
}

// Encodes data and decodes what a store would keep; returns the codec.
Codec RoundTrip(ExtentEncoder* enc, const CompressionPolicy& policy, const char* data, size_t len) {
  std::vector<char> out;
  Codec codec = enc->Encode(policy, data, len, &out);
  const char* stored = codec == Codec::kRaw ? data : out.data();
  size_t stored_len = codec == Codec::kRaw ? len : out.size();
  if (codec == Codec::kRaw) {
    EXPECT_TRUE(out.empty());
  }
  std::vector<char> back(len + 1, '\x5a');
  Status s = DecodeRun(codec, stored, stored_len, back.data(), len);
  EXPECT_TRUE(s.ok()) << s.ToString() << " codec " << CodecName(codec) << " len " << len;
  EXPECT_EQ(0, std::memcmp(back.data(), data, len)) << CodecName(codec) << " len " << len;
  EXPECT_EQ('\x5a', back[len]) << "decode wrote past raw_len";
  return codec;
}

// The layout the header specifies, byte by byte.
std::vector<char> ReferenceGroup(const char* in, size_t len, unsigned w) {
  std::vector<char> out(len);
  size_t n = len / w;
  for (size_t i = 0; i < n; ++i) {
    for (unsigned b = 0; b < w; ++b) out[b * n + i] = in[i * w + b];
  }
  for (size_t k = n * w; k < len; ++k) out[k] = in[k];
  return out;
}

const size_t kEdgeSizes[] = {1,    2,    3,     4,     5,     7,     8,         9,        63,
                             64,   65,   127,   128,   129,   255,   257,       4095,     4096,
                             4097, 8191, 65535, 65536, 65537, 65539, kMiB - 1, kMiB};

TEST(ByteGroup, ExampleLayout) {
  const char in[] = "aAbBcCd";  // three pairs and a trailing byte
  char out[7];
  GroupBytes(in, 7, 2, out);
  EXPECT_EQ(std::string("abcABCd"), std::string(out, 7));
  const char in4[] = "0123456789";
  char out4[10];
  GroupBytes(in4, 10, 4, out4);
  EXPECT_EQ(std::string("0415263789"), std::string(out4, 10));
}

TEST(ByteGroup, MatchesReferenceAndInvertsForWidths1To8) {
  std::vector<char> data = RandomBytes(kMiB + 16, 1);
  for (unsigned w = 1; w <= 8; ++w) {
    for (size_t len : kEdgeSizes) {
      for (size_t misalign : {0, 1, 3}) {
        const char* in = data.data() + misalign;
        std::vector<char> expect = ReferenceGroup(in, len, w);
        std::vector<char> grouped(len + 2, '\x11');
        GroupBytes(in, len, w, grouped.data() + 1);  // unaligned output too
        ASSERT_EQ(0, std::memcmp(grouped.data() + 1, expect.data(), len))
            << "width " << w << " len " << len << " misalign " << misalign;
        ASSERT_EQ('\x11', grouped[len + 1]);
        std::vector<char> back(len + 3, '\x22');
        UngroupBytes(grouped.data() + 1, len, w, back.data() + 3 - misalign);
        ASSERT_EQ(0, std::memcmp(back.data() + 3 - misalign, in, len))
            << "width " << w << " len " << len << " misalign " << misalign;
      }
    }
  }
}

TEST(ByteGroup, EmptyIsNoOp) {
  char out = 'x';
  GroupBytes(nullptr, 0, 2, &out);
  UngroupBytes(nullptr, 0, 4, &out);
  EXPECT_EQ('x', out);
}

TEST(ExtentCodec, RoundTripsEveryFilterAtEdgeSizes) {
  std::vector<char> bf16 = Bf16Like(kMiB + 8, 2);
  std::vector<char> text = Text(kMiB + 8);
  std::vector<char> zeros(kMiB + 8, '\0');
  ExtentEncoder enc;
  for (ByteFilter filter :
       {ByteFilter::kAuto, ByteFilter::kNone, ByteFilter::kGroup2, ByteFilter::kGroup4}) {
    for (int level : {1, 3}) {
      for (const std::vector<char>* data : {&bf16, &text, &zeros}) {
        for (size_t len : kEdgeSizes) {
          // data + 1: runs come from user buffers with any alignment.
          RoundTrip(&enc, Zstd(level, filter), data->data() + 1, len);
        }
      }
    }
  }
}

TEST(ExtentCodec, RoundTripsAtNegativeAndHighLevels) {
  std::vector<char> fp32 = Fp32Like(kMiB, 3);
  ExtentEncoder enc;
  for (int level : {-7, -3, 9, 19}) {
    for (ByteFilter filter : {ByteFilter::kAuto, ByteFilter::kGroup4}) {
      RoundTrip(&enc, Zstd(level, filter), fp32.data(), 256 << 10);
    }
  }
}

TEST(ExtentCodec, CompressesEveryCodecWhenWorthIt) {
  std::vector<char> text = Text(kMiB);
  ExtentEncoder enc;
  EXPECT_EQ(Codec::kZstd, RoundTrip(&enc, Zstd(3, ByteFilter::kNone), text.data(), kMiB));
  EXPECT_EQ(Codec::kZstdGroup2, RoundTrip(&enc, Zstd(3, ByteFilter::kGroup2), text.data(), kMiB));
  EXPECT_EQ(Codec::kZstdGroup4, RoundTrip(&enc, Zstd(3, ByteFilter::kGroup4), text.data(), kMiB));
}

TEST(ExtentCodec, IncompressibleRunIsStoredRaw) {
  std::vector<char> random = RandomBytes(kMiB, 4);
  for (ByteFilter filter : {ByteFilter::kAuto, ByteFilter::kNone, ByteFilter::kGroup2}) {
    ExtentEncoder enc;
    EXPECT_EQ(Codec::kRaw, RoundTrip(&enc, Zstd(3, filter), random.data(), kMiB));
    EXPECT_EQ(1u, enc.stats().runs);
    EXPECT_EQ(1u, enc.stats().runs_raw);
    EXPECT_EQ(kMiB, enc.stats().bytes_out);
    EXPECT_EQ(1u, enc.stats().by_codec[0]);
  }
}

TEST(ExtentCodec, RunOfOneBlockIsStoredRaw) {
  std::vector<char> zeros(8192, '\0');
  ExtentEncoder enc;
  EXPECT_EQ(Codec::kRaw, RoundTrip(&enc, Zstd(3, ByteFilter::kNone), zeros.data(), 4096));
  EXPECT_EQ(Codec::kRaw, RoundTrip(&enc, Zstd(3, ByteFilter::kAuto), zeros.data(), 100));
  EXPECT_EQ(Codec::kZstd, RoundTrip(&enc, Zstd(3, ByteFilter::kNone), zeros.data(), 8192));
}

TEST(ExtentCodec, SavingBelowMinimumIsStoredRaw) {
  // 1 MiB = 256 blocks: compression must save 256/32 = 8 of them.
  std::vector<char> run = RandomBytes(kMiB, 5);
  std::memset(run.data(), 0, 16 << 10);  // about 4 blocks to gain
  ExtentEncoder enc;
  EXPECT_EQ(Codec::kRaw, RoundTrip(&enc, Zstd(3, ByteFilter::kNone), run.data(), kMiB));
  std::memset(run.data(), 0, 64 << 10);  // about 16
  EXPECT_EQ(Codec::kZstd, RoundTrip(&enc, Zstd(3, ByteFilter::kNone), run.data(), kMiB));
}

TEST(ExtentCodec, Bf16CompressesBetterGroupedAndAutoPicksGroup2) {
  std::vector<char> bf16 = Bf16Like(kMiB, 6);
  ExtentEncoder enc;
  std::vector<char> plain, grouped, chosen;
  ASSERT_EQ(Codec::kZstd, enc.Encode(Zstd(3, ByteFilter::kNone), bf16.data(), kMiB, &plain));
  ASSERT_EQ(Codec::kZstdGroup2,
            enc.Encode(Zstd(3, ByteFilter::kGroup2), bf16.data(), kMiB, &grouped));
  EXPECT_LT(grouped.size() * 1.05, plain.size());
  EXPECT_GT(static_cast<double>(kMiB) / grouped.size(), 1.35);
  EXPECT_EQ(Codec::kZstdGroup2, enc.Encode(Zstd(3, ByteFilter::kAuto), bf16.data(), kMiB, &chosen));
  EXPECT_EQ(grouped, chosen);
}

TEST(ExtentCodec, Fp32CompressesBetterGroupedAndAutoPicksGroup4) {
  std::vector<char> fp32 = Fp32Like(kMiB, 7);
  ExtentEncoder enc;
  std::vector<char> plain, grouped, chosen;
  Codec plain_codec = enc.Encode(Zstd(3, ByteFilter::kNone), fp32.data(), kMiB, &plain);
  size_t plain_size = plain_codec == Codec::kRaw ? kMiB : plain.size();
  ASSERT_EQ(Codec::kZstdGroup4,
            enc.Encode(Zstd(3, ByteFilter::kGroup4), fp32.data(), kMiB, &grouped));
  EXPECT_LT(grouped.size() * 1.05, plain_size);
  EXPECT_GT(static_cast<double>(kMiB) / grouped.size(), 1.1);
  EXPECT_EQ(Codec::kZstdGroup4, enc.Encode(Zstd(3, ByteFilter::kAuto), fp32.data(), kMiB, &chosen));
  EXPECT_EQ(grouped, chosen);
}

TEST(ExtentCodec, OutputIsDeterministic) {
  std::vector<char> bf16 = Bf16Like(kMiB, 8);
  ExtentEncoder a, b;
  std::vector<char> first, second, third;
  std::vector<char> other = Text(kMiB);
  a.Encode(Zstd(3, ByteFilter::kAuto), bf16.data(), kMiB, &first);
  a.Encode(Zstd(19, ByteFilter::kNone), other.data(), kMiB, &second);  // state in between
  a.Encode(Zstd(3, ByteFilter::kAuto), bf16.data(), kMiB, &second);
  b.Encode(Zstd(3, ByteFilter::kAuto), bf16.data(), kMiB, &third);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first, third);
}

TEST(ExtentCodec, StatsCountRunsAndBytes) {
  std::vector<char> text = Text(kMiB);
  std::vector<char> random = RandomBytes(kMiB, 9);
  ExtentEncoder enc;
  std::vector<char> out;
  enc.Encode(Zstd(3, ByteFilter::kNone), text.data(), kMiB, &out);
  size_t compressed = out.size();
  enc.Encode(Zstd(3, ByteFilter::kNone), random.data(), kMiB, &out);
  const EncoderStats& s = enc.stats();
  EXPECT_EQ(2u, s.runs);
  EXPECT_EQ(1u, s.runs_raw);
  EXPECT_EQ(2 * kMiB, s.bytes_in);
  EXPECT_EQ(kMiB + compressed, s.bytes_out);
  EXPECT_EQ(1u, s.by_codec[static_cast<int>(Codec::kRaw)]);
  EXPECT_EQ(1u, s.by_codec[static_cast<int>(Codec::kZstd)]);
}

class DecodeRejects : public ::testing::TestWithParam<Codec> {
 protected:
  void SetUp() override {
    data_ = Bf16Like(kMiB, 10);
    ByteFilter filter = GetParam() == Codec::kZstd         ? ByteFilter::kNone
                        : GetParam() == Codec::kZstdGroup2 ? ByteFilter::kGroup2
                                                           : ByteFilter::kGroup4;
    ASSERT_EQ(GetParam(), enc_.Encode(Zstd(3, filter), data_.data(), kMiB, &stored_));
    dst_.resize(kMiB + 1);
  }
  Status Decode(const std::vector<char>& stored, size_t raw_len) {
    return DecodeRun(GetParam(), stored.data(), stored.size(), dst_.data(), raw_len);
  }

  std::vector<char> data_, stored_, dst_;
  ExtentEncoder enc_;
};

TEST_P(DecodeRejects, TruncatedStream) {
  for (size_t keep : {stored_.size() - 1, stored_.size() / 2, size_t{5}, size_t{0}}) {
    std::vector<char> cut(stored_.begin(), stored_.begin() + keep);
    EXPECT_TRUE(Decode(cut, kMiB).IsCorruption()) << "kept " << keep;
  }
}

TEST_P(DecodeRejects, TrailingBytes) {
  std::vector<char> longer = stored_;
  longer.push_back('\0');
  EXPECT_TRUE(Decode(longer, kMiB).IsCorruption());
}

TEST_P(DecodeRejects, WrongRawLength) {
  EXPECT_TRUE(Decode(stored_, kMiB - 1).IsCorruption());
  EXPECT_TRUE(Decode(stored_, kMiB + 1).IsCorruption());
  EXPECT_TRUE(Decode(stored_, kMiB).ok());
}

TEST_P(DecodeRejects, AlteredFrameStructure) {
  // The magic number, the frame header (its content size) and the first
  // block header: the frame's structure. Payload bytes are the record CRC's
  // job (the frame carries no checksum of its own).
  for (size_t at : {size_t{0}, size_t{3}, size_t{4}, size_t{6}, size_t{7}, size_t{8}}) {
    std::vector<char> bad = stored_;
    bad[at] ^= 0x40;
    Status s = Decode(bad, kMiB);
    EXPECT_TRUE(s.IsCorruption()) << "byte " << at << ": " << s.ToString();
  }
}

TEST_P(DecodeRejects, AlteredPayloadNeverOverrunsOrCrashes) {
  for (size_t at = 9; at < stored_.size(); at += stored_.size() / 97) {
    std::vector<char> bad = stored_;
    bad[at] ^= 0x5a;
    dst_[kMiB] = '\x77';
    Status s = Decode(bad, kMiB);
    EXPECT_TRUE(s.ok() || s.IsCorruption()) << s.ToString();
    EXPECT_EQ('\x77', dst_[kMiB]);
  }
}

INSTANTIATE_TEST_SUITE_P(ZstdCodecs, DecodeRejects,
                         ::testing::Values(Codec::kZstd, Codec::kZstdGroup2, Codec::kZstdGroup4),
                         [](const auto& info) {
                           switch (info.param) {
                             case Codec::kZstdGroup2: return std::string("Group2");
                             case Codec::kZstdGroup4: return std::string("Group4");
                             default: return std::string("Plain");
                           }
                         });

TEST(DecodeRun, RawNeedsExactLength) {
  std::vector<char> data = Text(8192);
  std::vector<char> dst(8192);
  EXPECT_TRUE(DecodeRun(Codec::kRaw, data.data(), 8192, dst.data(), 8192).ok());
  EXPECT_EQ(data, dst);
  EXPECT_TRUE(DecodeRun(Codec::kRaw, data.data(), 8191, dst.data(), 8192).IsCorruption());
}

TEST(DecodeRun, UnknownCodecIsCorruption) {
  char stored[16] = {};
  char dst[16];
  EXPECT_TRUE(DecodeRun(static_cast<Codec>(kMaxCodec + 1), stored, 16, dst, 16).IsCorruption());
}

TEST(DecodeRun, ZeroLengthRunsRoundTrip) {
  char dst = 'q';
  EXPECT_TRUE(DecodeRun(Codec::kRaw, nullptr, 0, &dst, 0).ok());
  EXPECT_EQ('q', dst);
}

// The policy grammar: none | zstd[:LEVEL[:FILTER]].
TEST(CompressionPolicy, ParsesTheGrammar) {
  struct Case {
    const char* text;
    bool enabled;
    int level;
    ByteFilter filter;
  } cases[] = {
      {"none", false, 3, ByteFilter::kAuto},
      {"zstd", true, 3, ByteFilter::kAuto},
      {"zstd:1", true, 1, ByteFilter::kAuto},
      {"zstd:-3", true, -3, ByteFilter::kAuto},
      {"zstd:-7", true, -7, ByteFilter::kAuto},
      {"zstd:19", true, 19, ByteFilter::kAuto},
      {"zstd:3:group2", true, 3, ByteFilter::kGroup2},
      {"zstd:9:group4", true, 9, ByteFilter::kGroup4},
      {"zstd:0:none", true, 0, ByteFilter::kNone},
      {"zstd:1:auto", true, 1, ByteFilter::kAuto},
  };
  for (const Case& c : cases) {
    Result<CompressionPolicy> p = ParseCompressionPolicy(c.text);
    ASSERT_TRUE(p.ok()) << c.text << ": " << p.status().ToString();
    EXPECT_EQ(c.enabled, p->enabled) << c.text;
    if (c.enabled) {
      EXPECT_EQ(c.level, p->level) << c.text;
      EXPECT_EQ(c.filter, p->filter) << c.text;
    }
  }
}

TEST(CompressionPolicy, RejectsTextOutsideTheGrammarNamingTheBadPart) {
  struct Case {
    const char* text;
    const char* named;  // the message must name this
  } cases[] = {
      {"", "empty"},
      {"zstd:99", "99"},
      {"zstd:20", "20"},
      {"zstd:-8", "-8"},
      {"zstd:99999999999", "99999999999"},
      {"zstd:x", "'x'"},
      {"zstd:", "''"},
      {"zstd:3x", "'3x'"},
      {"zstd:+3", "'+3'"},
      {"lz4", "'lz4'"},
      {"ZSTD", "'ZSTD'"},
      {"none:3", "'none'"},
      {"zstd:3:bogus", "'bogus'"},
      {"zstd:3:", "''"},
      {"zstd:3:group2:x", "too many"},
      {" zstd", "' zstd'"},
  };
  for (const Case& c : cases) {
    Result<CompressionPolicy> p = ParseCompressionPolicy(c.text);
    ASSERT_FALSE(p.ok()) << "accepted '" << c.text << "'";
    EXPECT_EQ(Status::Code::kInvalid, p.status().code()) << c.text;
    EXPECT_NE(std::string::npos, p.status().message().find(c.named))
        << "'" << c.text << "' -> " << p.status().message();
  }
}

TEST(CompressionPolicy, FormatIsCanonicalAndParsesBack) {
  EXPECT_EQ("none", FormatCompressionPolicy(CompressionPolicy{}));
  EXPECT_EQ("zstd:3:auto", FormatCompressionPolicy(*ParseCompressionPolicy("zstd")));
  EXPECT_EQ("zstd:-3:group2", FormatCompressionPolicy(Zstd(-3, ByteFilter::kGroup2)));
  for (const char* text : {"none", "zstd", "zstd:1", "zstd:19:none", "zstd:-7:group4"}) {
    CompressionPolicy p = *ParseCompressionPolicy(text);
    Result<CompressionPolicy> again = ParseCompressionPolicy(FormatCompressionPolicy(p));
    ASSERT_TRUE(again.ok()) << text;
    EXPECT_EQ(p, *again) << text;
  }
}

TEST(CodecName, NamesEveryCodec) {
  EXPECT_STREQ("raw", CodecName(Codec::kRaw));
  EXPECT_STREQ("zstd", CodecName(Codec::kZstd));
  EXPECT_STREQ("zstd+group2", CodecName(Codec::kZstdGroup2));
  EXPECT_STREQ("zstd+group4", CodecName(Codec::kZstdGroup4));
}

}  // namespace
}  // namespace ckptfs
