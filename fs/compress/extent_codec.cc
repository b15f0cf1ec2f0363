// The run codecs: policy text, the encoder's choice of filter, and decoding.
//
// kAuto chooses by trial rather than by guessing the dtype: the middle of the
// run is compressed plain, grouped by 2 and grouped by 4 at a fast level and
// the smallest wins. A checkpoint run is usually the inside of one tensor,
// so its middle stands for the whole, and a trial costs a few percent of
// compressing the run once (docs/compression-data.md has the numbers).
#include "compress/extent_codec.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_c_literalCompressionMode; no static-only functions
#include <zstd.h>
#include <zstd_errors.h>

#include <cassert>
#include <charconv>
#include <cstring>
#include <memory>
#include <string>

#include "compress/byte_group.h"

namespace ckptfs {
namespace {

constexpr size_t kBlockSize = 4096;  // the data log's append granularity
constexpr int kMinLevel = -7;
constexpr int kMaxLevel = 19;
constexpr int kDefaultLevel = 3;

// The trial sample. Its size is a trade: each trial costs about
// kSampleBytes / run size of compressing the run once, and too small a
// sample lets the Huffman table headers (one per stream, so four for
// group4) weigh in the comparison. 16 KiB picked the same filter as 32 and
// 64 KiB on every run of the real weights measured, at about a third of the
// 64 KiB cost (docs/compression-data.md).
constexpr size_t kSampleBytes = 16 << 10;
// zstd level 1 already Huffman-codes literals, which is where grouping pays;
// on byte-grouped floats it even compresses better than levels 2-9. Negative
// policy levels sample at their own level instead: zstd stores literals raw
// there, so plain zstd gains far less than at level 1, and a level 1 trial
// would overrate it (tesseract's weights at level -3: plain 1.80, group4 1.93).
constexpr int kSampleLevel = 1;

size_t Blocks(size_t bytes) { return (bytes + kBlockSize - 1) / kBlockSize; }

// Whether `stored` bytes in place of `raw` are worth a decode on each read.
bool WorthStoring(size_t raw, size_t stored) {
  size_t raw_blocks = Blocks(raw), stored_blocks = Blocks(stored);
  if (stored_blocks >= raw_blocks) return false;
  size_t saved = raw_blocks - stored_blocks;
  return static_cast<double>(saved) >= static_cast<double>(raw_blocks) * kMinBlockSaving;
}

unsigned GroupWidth(Codec codec) {
  switch (codec) {
    case Codec::kZstdGroup2: return 2;
    case Codec::kZstdGroup4: return 4;
    default: return 1;
  }
}

const char* FilterName(ByteFilter filter) {
  switch (filter) {
    case ByteFilter::kAuto: return "auto";
    case ByteFilter::kNone: return "none";
    case ByteFilter::kGroup2: return "group2";
    case ByteFilter::kGroup4: return "group4";
  }
  return "auto";
}

// A growable byte buffer that, unlike std::vector, does not zero what it
// hands out: every user overwrites it whole.
class Scratch {
 public:
  char* Get(size_t n) {
    if (n > capacity_) {
      data_ = std::make_unique_for_overwrite<char[]>(n);
      capacity_ = n;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
};

Status DecodeZstd(const char* stored, size_t stored_len, char* dst, size_t raw_len) {
  // The frame header must promise exactly raw_len bytes, and the frame must
  // fill the record: the encoder always writes the content size, and one
  // frame per run.
  unsigned long long content = ZSTD_getFrameContentSize(stored, stored_len);
  if (content == ZSTD_CONTENTSIZE_ERROR) {
    return Status::Corruption("stored run is not a zstd frame");
  }
  if (content == ZSTD_CONTENTSIZE_UNKNOWN) {
    return Status::Corruption("zstd frame of a stored run does not record its size");
  }
  if (content != raw_len) {
    return Status::Corruption("zstd frame holds " + std::to_string(content) +
                              " bytes, the extent says " + std::to_string(raw_len));
  }
  size_t frame = ZSTD_findFrameCompressedSize(stored, stored_len);
  if (ZSTD_isError(frame)) {
    return Status::Corruption(
        std::string("zstd frame of a stored run is cut short or malformed: ") +
        ZSTD_getErrorName(frame));
  }
  if (frame != stored_len) {
    return Status::Corruption("stored run has " + std::to_string(stored_len - frame) +
                              " bytes after its zstd frame");
  }
  size_t n = ZSTD_decompress(dst, raw_len, stored, stored_len);
  if (ZSTD_isError(n)) {
    return Status::Corruption(std::string("zstd could not decode a stored run: ") +
                              ZSTD_getErrorName(n));
  }
  if (n != raw_len) {
    return Status::Corruption("zstd decoded " + std::to_string(n) +
                              " bytes of a stored run, expected " + std::to_string(raw_len));
  }
  return Status::Ok();
}

}  // namespace

Result<CompressionPolicy> ParseCompressionPolicy(std::string_view text) {
  constexpr const char* kGrammar = " (expected none or zstd[:LEVEL[:FILTER]])";
  if (text.empty()) return Status::Invalid(std::string("empty compression policy") + kGrammar);
  CompressionPolicy policy;
  if (text == "none") return policy;

  std::string_view parts[4];
  size_t count = 0;
  for (std::string_view rest = text;;) {
    size_t colon = rest.find(':');
    if (count == 3) {
      return Status::Invalid("compression policy '" + std::string(text) + "' has too many parts" +
                             kGrammar);
    }
    parts[count++] = rest.substr(0, colon);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }

  if (parts[0] == "none") {
    return Status::Invalid("compression policy '" + std::string(text) +
                           "': 'none' takes no level or filter");
  }
  if (parts[0] != "zstd") {
    return Status::Invalid("unknown compressor '" + std::string(parts[0]) +
                           "' in compression policy '" + std::string(text) + "'" + kGrammar);
  }
  policy.enabled = true;
  policy.level = kDefaultLevel;
  if (count >= 2) {
    std::string_view level = parts[1];
    int value = 0;
    auto [end, ec] = std::from_chars(level.data(), level.data() + level.size(), value);
    bool integer = !level.empty() && end == level.data() + level.size() &&
                   (ec == std::errc() || ec == std::errc::result_out_of_range);
    if (!integer) {
      return Status::Invalid("compression level '" + std::string(level) + "' in '" +
                             std::string(text) + "' is not an integer");
    }
    if (ec != std::errc() || value < kMinLevel || value > kMaxLevel) {
      return Status::Invalid("compression level " + std::string(level) + " in '" +
                             std::string(text) + "' is outside " + std::to_string(kMinLevel) +
                             ".." + std::to_string(kMaxLevel));
    }
    policy.level = value;
  }
  if (count == 3) {
    std::string_view filter = parts[2];
    if (filter == "auto") {
      policy.filter = ByteFilter::kAuto;
    } else if (filter == "none") {
      policy.filter = ByteFilter::kNone;
    } else if (filter == "group2") {
      policy.filter = ByteFilter::kGroup2;
    } else if (filter == "group4") {
      policy.filter = ByteFilter::kGroup4;
    } else {
      return Status::Invalid("unknown filter '" + std::string(filter) + "' in '" +
                             std::string(text) + "' (expected auto, none, group2 or group4)");
    }
  }
  return policy;
}

std::string FormatCompressionPolicy(const CompressionPolicy& policy) {
  if (!policy.enabled) return "none";
  return "zstd:" + std::to_string(policy.level) + ":" + FilterName(policy.filter);
}

const char* CodecName(Codec codec) {
  switch (codec) {
    case Codec::kRaw: return "raw";
    case Codec::kZstd: return "zstd";
    case Codec::kZstdGroup2: return "zstd+group2";
    case Codec::kZstdGroup4: return "zstd+group4";
  }
  return "unknown";
}

struct ExtentEncoder::Impl {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  Scratch grouped;  // the run after byte grouping
  Scratch sample;   // a grouped sample, then each trial's output

  ~Impl() { ZSTD_freeCCtx(cctx); }

  // One zstd frame of src at `level` into dst, or an error code
  // (ZSTD_isError). `streams` > 1 says src is byte-grouped into that many
  // equal streams (the last one longer by the partial element).
  size_t Compress(int level, const char* src, size_t len, unsigned streams, char* dst,
                  size_t capacity) {
    if (cctx == nullptr) return static_cast<size_t>(-ZSTD_error_memory_allocation);
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0);  // the record's CRC covers it
    if (streams <= 1) return ZSTD_compress2(cctx, dst, capacity, src, len);

    // Grouped floats gain almost only from Huffman-coding their exponent
    // stream, and zstd's negative levels store literals raw: force them on
    // (bf16 at level -3: ratio 1.04 -> 1.44). An unknown parameter in some
    // other libzstd only costs ratio, so its error is ignored.
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_literalCompressionMode, ZSTD_ps_enable);
    // The matches zstd finds in an exponent stream are short coincidences
    // that cost more as sequences than as Huffman-coded literals; the
    // longest minimum match keeps real repeats (padding, copied tensors)
    // is no slower: bf16 at level 3, ratio 1.39 -> 1.42, where the order-0
    // entropy bound of its streams is 1.44.
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, ZSTD_MINMATCH_MAX);
    // zstd codes literals with one Huffman table per block (128 KiB), so a
    // block that straddles the exponent and the mantissa streams codes both
    // with one table, and the exponents' gain is lost. Streams that are not
    // whole blocks (any run under 512 KiB, or of odd size) therefore end
    // their blocks at stream boundaries with a flush: same frame format,
    // bf16 in 64 KiB runs, ratio 1.26 -> 1.42.
    size_t n = len / streams;
    if (n % ZSTD_BLOCKSIZE_MAX == 0) return ZSTD_compress2(cctx, dst, capacity, src, len);
    ZSTD_CCtx_setPledgedSrcSize(cctx, len);
    ZSTD_outBuffer out{dst, capacity, 0};
    for (unsigned k = 0; k < streams; ++k) {
      bool last = k + 1 == streams;
      ZSTD_inBuffer in{src + k * n, last ? len - k * n : n, 0};
      size_t remaining;
      do {
        remaining = ZSTD_compressStream2(cctx, &out, &in, last ? ZSTD_e_end : ZSTD_e_flush);
        if (ZSTD_isError(remaining)) return remaining;
        if (remaining != 0 && out.pos == out.size) {
          return static_cast<size_t>(-ZSTD_error_dstSize_tooSmall);
        }
      } while (remaining != 0);
    }
    return out.pos;
  }

  // Size of one trial: the sample through the codec's filter at `level`.
  // Incompressible samples come out about as large as they went in.
  size_t Trial(Codec codec, int level, const char* src, size_t len) {
    size_t bound = ZSTD_compressBound(len);
    char* buf = sample.Get(len + bound);
    const char* in = src;
    unsigned w = GroupWidth(codec);
    if (w > 1) {
      GroupBytes(src, len, w, buf);
      in = buf;
    }
    size_t n = Compress(level, in, len, w, buf + len, bound);
    return ZSTD_isError(n) ? bound : n;
  }

  // The codec for this run; kRaw when the trials found nothing to gain.
  Codec Choose(const CompressionPolicy& policy, const char* data, size_t len) {
    switch (policy.filter) {
      case ByteFilter::kNone: return Codec::kZstd;
      case ByteFilter::kGroup2: return Codec::kZstdGroup2;
      case ByteFilter::kGroup4: return Codec::kZstdGroup4;
      case ByteFilter::kAuto: break;
    }
    size_t n = len < kSampleBytes ? len : kSampleBytes;
    // From the middle, starting on a multiple of 4 so that the sample's
    // elements line up with the run's for both widths.
    size_t start = ((len - n) / 2) & ~size_t{3};
    const char* s = data + start;
    // Each wider grouping must beat the narrower by kWiderGain: bf16 grouped
    // by 4 is two copies of its grouping by 2 and comes out within noise of
    // it, and the narrower filter is the truer description of the data.
    constexpr double kWiderGain = 0.99;
    int level = policy.level < 0 ? policy.level : kSampleLevel;
    Codec best = Codec::kZstd;
    size_t best_size = Trial(Codec::kZstd, level, s, n);
    for (Codec c : {Codec::kZstdGroup2, Codec::kZstdGroup4}) {
      size_t size = Trial(c, level, s, n);
      if (static_cast<double>(size) < static_cast<double>(best_size) * kWiderGain) {
        best = c, best_size = size;
      }
    }
    // A sample that did not shrink at all (random or already compressed
    // bytes) says the run will not either; skip compressing it whole. Only
    // when the sample is a small part of the run, so the cost saved is real.
    if (best_size >= n && len >= 4 * n) return Codec::kRaw;
    return best;
  }
};

ExtentEncoder::ExtentEncoder() : impl_(new Impl) {}

ExtentEncoder::~ExtentEncoder() { delete impl_; }

Codec ExtentEncoder::Encode(const CompressionPolicy& policy, const char* data, size_t len,
                            std::vector<char>* out) {
  assert(policy.enabled);
  out->clear();
  Codec codec = Codec::kRaw;
  // A run of one block or less cannot save a block.
  if (policy.enabled && len > kBlockSize) codec = impl_->Choose(policy, data, len);
  if (codec != Codec::kRaw) {
    const char* src = data;
    if (unsigned w = GroupWidth(codec); w > 1) {
      char* g = impl_->grouped.Get(len);
      GroupBytes(data, len, w, g);
      src = g;
    }
    size_t bound = ZSTD_compressBound(len);
    out->resize(bound);
    size_t n = impl_->Compress(policy.level, src, len, GroupWidth(codec), out->data(), bound);
    if (!ZSTD_isError(n) && WorthStoring(len, n)) {
      out->resize(n);
    } else {
      out->clear();
      codec = Codec::kRaw;
    }
  }

  stats_.runs++;
  stats_.bytes_in += len;
  stats_.bytes_out += codec == Codec::kRaw ? len : out->size();
  stats_.by_codec[static_cast<uint8_t>(codec)]++;
  if (codec == Codec::kRaw) stats_.runs_raw++;
  return codec;
}

Status DecodeRun(Codec codec, const char* stored, size_t stored_len, char* dst, size_t raw_len) {
  switch (codec) {
    case Codec::kRaw:
      if (stored_len != raw_len) {
        return Status::Corruption("raw run stores " + std::to_string(stored_len) +
                                  " bytes, the extent says " + std::to_string(raw_len));
      }
      if (raw_len > 0) std::memcpy(dst, stored, raw_len);
      return Status::Ok();
    case Codec::kZstd: return DecodeZstd(stored, stored_len, dst, raw_len);
    case Codec::kZstdGroup2:
    case Codec::kZstdGroup4: {
      auto grouped = std::make_unique_for_overwrite<char[]>(raw_len);
      CKPTFS_RETURN_IF_ERROR(DecodeZstd(stored, stored_len, grouped.get(), raw_len));
      UngroupBytes(grouped.get(), raw_len, GroupWidth(codec), dst);
      return Status::Ok();
    }
  }
  return Status::Corruption("unknown codec " + std::to_string(static_cast<unsigned>(codec)) +
                            " for a stored run");
}

}  // namespace ckptfs
