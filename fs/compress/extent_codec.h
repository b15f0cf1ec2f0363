// Extent compression: how one stored run of file data is encoded.
//
// A run (at most 1 MiB of file bytes, one FUSE write or several contiguous
// ones) is compressed as a unit, so a read of any byte of it decodes the
// whole run (the run cache keeps decoded runs for the reads that follow).
// The codec is recorded per run in its WriteExtent record (docs/format.md):
//   0 raw           the bytes as written
//   1 zstd          one zstd frame of the bytes
//   2 zstd+group2   byte grouping with a 2-byte element (bf16, fp16), then zstd
//   3 zstd+group4   byte grouping with a 4-byte element (fp32), then zstd
// Byte grouping (fs/compress/byte_group.h) puts the n-th byte of every
// element together: exponent bytes of floating-point tensors are highly
// repetitive, mantissa bytes are not, and zstd finds the former only when
// they are adjacent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ckptfs/status.h"
#include "format/physical_extent.h"

namespace ckptfs {


// Which element width to group by before zstd. kAuto picks per run by
// compressing a sample each way (see ExtentEncoder).
enum class ByteFilter : uint8_t { kAuto, kNone, kGroup2, kGroup4 };

// What a mount or a directory asks for. Text form (mount option
// `compress=`, xattr `user.ckptfs.compress`):
//   none | zstd[:LEVEL[:FILTER]]   LEVEL -7..19 (default 3),
//   FILTER auto | none | group2 | group4 (default auto)
struct CompressionPolicy {
  bool enabled = false;
  int level = 3;
  ByteFilter filter = ByteFilter::kAuto;
  bool operator==(const CompressionPolicy&) const = default;
};

// Invalid, with the reason, for text outside the grammar above.
Result<CompressionPolicy> ParseCompressionPolicy(std::string_view text);
// The canonical text form ("none" or "zstd:LEVEL:FILTER").
std::string FormatCompressionPolicy(const CompressionPolicy& policy);
const char* CodecName(Codec codec);

// Encoded runs are stored compressed only when that saves at least this
// fraction of the run's 4 KiB blocks (and at least one block); anything
// less is not worth a decode on every read, so the run is stored raw.
constexpr double kMinBlockSaving = 1.0 / 32;

struct EncoderStats {
  uint64_t runs = 0;           // runs offered
  uint64_t runs_raw = 0;       // stored raw (incompressible or too small)
  uint64_t bytes_in = 0;       // file bytes offered
  uint64_t bytes_out = 0;      // stored bytes (raw runs count at their raw size)
  uint64_t by_codec[kMaxCodec + 1] = {};  // runs per codec chosen
};

// Compresses runs. Holds a zstd context and scratch space, so one encoder
// per thread; not thread-safe. Memory for 1 MiB runs: the context takes
// 0.5 MiB at levels -7..1, 1.3 MiB at 3, 12.5 MiB at 9 and 17 MiB at 19,
// plus 1 MiB of grouping scratch. Output is deterministic: the same policy
// and bytes give the same stored bytes, whatever the encoder did before.
// On floats low levels win both ways (docs/compression-data.md): grouped
// bf16 is smaller and about twice as fast at -3 as at 3.
class ExtentEncoder {
 public:
  ExtentEncoder();
  ~ExtentEncoder();
  ExtentEncoder(const ExtentEncoder&) = delete;
  ExtentEncoder& operator=(const ExtentEncoder&) = delete;

  // Encodes data[0, len) per `policy` (which must be enabled). Returns the
  // codec used; *out holds the stored bytes (for kRaw it is left empty and
  // the caller stores `data` itself). Runs of one 4 KiB block or less are
  // always kRaw, without compressing.
  Codec Encode(const CompressionPolicy& policy, const char* data, size_t len,
               std::vector<char>* out);

  const EncoderStats& stats() const { return stats_; }

 private:
  struct Impl;
  Impl* impl_;
  EncoderStats stats_;
};

// Decodes a stored run into dst[0, raw_len). Corruption when the stored bytes
// do not decode to exactly raw_len bytes (the caller has already checked
// their CRC, so this means a bug or a forged record, not a bad disk). The
// frame carries no checksum of its own, so altered payload bytes that still
// parse decode to other bytes of the right length: the CRC is what catches
// those. Thread-safe; allocates a zstd context (93 KiB) and, for the group
// codecs, a raw_len scratch per call.
Status DecodeRun(Codec codec, const char* stored, size_t stored_len, char* dst, size_t raw_len);

}  // namespace ckptfs
