// ckptfs-compress-bench: what the run codecs make of checkpoint bytes.
//
// Splits each input into runs the way the data log stores them (1 MiB by
// default), encodes every run with each filter (plain zstd, group2, group4,
// auto) through the store's own ExtentEncoder and decodes it back with
// DecodeRun, and prints the ratio as the store counts it: every run rounded
// up to 4 KiB blocks, runs that do not save enough stored raw. One thread;
// MB/s are 10^6 bytes of file data per second of the thread's CPU time, so
// that other work on the machine does not count against the codec.
#include <getopt.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compress/byte_group.h"
#include "compress/extent_codec.h"

namespace ckptfs {
namespace {

constexpr size_t kBlock = 4096;

struct Input {
  std::string name;  // a path, or synthetic:KIND
  std::string kind;  // the label the table shows
  std::vector<char> bytes;
};

struct Mode {
  const char* name;
  ByteFilter filter;
};
constexpr Mode kModes[] = {{"zstd", ByteFilter::kNone},
                           {"group2", ByteFilter::kGroup2},
                           {"group4", ByteFilter::kGroup4},
                           {"auto", ByteFilter::kAuto}};

struct Row {
  const Input* input;
  int level;
  const char* mode;
  double ratio;        // 4 KiB-rounded raw / 4 KiB-rounded stored
  double exact_ratio;  // raw bytes / stored bytes
  double encode_mbps, decode_mbps;
  EncoderStats stats;
  double overhead_pct = NAN;  // auto only: encode time over the fixed filter it picked
};

// CPU seconds this thread has run.
double Now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

size_t Rounded(size_t bytes) { return (bytes + kBlock - 1) / kBlock * kBlock; }

bool ReadFile(const std::string& path, size_t max_bytes, std::vector<char>* out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  out->clear();
  char buf[1 << 16];
  size_t n;
  while (out->size() < max_bytes && (n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    out->insert(out->end(), buf, buf + std::min(n, max_bytes - out->size()));
  }
  bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

// Synthetic stand-ins for checkpoint tensors: normal weights (std 0.02, as a
// trained layer's are) in fp32 and in bf16 by truncation, and random bytes.
std::vector<char> Synthetic(const std::string& kind, size_t bytes) {
  std::mt19937_64 rng(42);
  std::vector<char> out(bytes);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  if (kind == "fp32") {
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
      float f = dist(rng);
      std::memcpy(&out[i], &f, 4);
    }
  } else if (kind == "bf16") {
    for (size_t i = 0; i + 2 <= bytes; i += 2) {
      uint16_t h = static_cast<uint16_t>(std::bit_cast<uint32_t>(dist(rng)) >> 16);
      std::memcpy(&out[i], &h, 2);
    }
  } else {
    for (auto& c : out) c = static_cast<char>(rng());
  }
  return out;
}

// Encodes and decodes each run of `in` `repeat` times and sums each run's
// fastest time: on a shared machine the per-run minimum filters out the
// moments another process had the core or the cache.
Row Measure(const Input& in, int level, const Mode& mode, size_t run_bytes, int repeat) {
  CompressionPolicy policy;
  policy.enabled = true;
  policy.level = level;
  policy.filter = mode.filter;
  const std::vector<char>& data = in.bytes;
  size_t runs = (data.size() + run_bytes - 1) / run_bytes;
  std::vector<std::vector<char>> stored(runs);
  std::vector<Codec> codecs(runs);

  ExtentEncoder enc, timing;  // `enc` sees each run once, for the stats
  std::vector<char> scratch, back(run_bytes);
  double enc_s = 0, dec_s = 0;
  size_t raw_rounded = 0, stored_rounded = 0;
  for (size_t r = 0; r < runs; ++r) {
    size_t off = r * run_bytes, len = std::min(run_bytes, data.size() - off);
    const char* run = data.data() + off;
    codecs[r] = enc.Encode(policy, run, len, &stored[r]);
    double best = 0;
    for (int pass = 0; pass < repeat; ++pass) {
      double t0 = Now();
      timing.Encode(policy, run, len, &scratch);
      double s = Now() - t0;
      if (pass == 0 || s < best) best = s;
    }
    enc_s += best;

    bool raw = codecs[r] == Codec::kRaw;
    const char* src = raw ? run : stored[r].data();
    size_t src_len = raw ? len : stored[r].size();
    for (int pass = 0; pass < repeat; ++pass) {
      double d0 = Now();
      Status s = DecodeRun(codecs[r], src, src_len, back.data(), len);
      double t = Now() - d0;
      if (pass == 0 || t < best) best = t;
      if (!s.ok() || std::memcmp(back.data(), run, len) != 0) {
        std::fprintf(stderr, "ckptfs-compress-bench: %s run %zu does not round-trip: %s\n",
                     in.name.c_str(), r, s.ToString().c_str());
        std::exit(1);
      }
    }
    dec_s += best;
    raw_rounded += Rounded(len);
    stored_rounded += Rounded(src_len);
  }
  EncoderStats stats = enc.stats();

  Row row{};
  row.input = &in;
  row.level = level;
  row.mode = mode.name;
  row.stats = stats;
  row.ratio = stored_rounded ? static_cast<double>(raw_rounded) / stored_rounded : 1.0;
  row.exact_ratio =
      row.stats.bytes_out ? static_cast<double>(row.stats.bytes_in) / row.stats.bytes_out : 1.0;
  row.encode_mbps = data.size() / 1e6 / std::max(enc_s, 1e-9);
  row.decode_mbps = data.size() / 1e6 / std::max(dec_s, 1e-9);
  return row;
}

// What choosing costs: per run, the encode time of kAuto over that of the
// fixed filter it picked, timed alternately (so both see the same machine)
// and the fastest of `repeat` kept for each. NAN when every run was raw.
double AutoOverheadPct(const Input& in, int level, size_t run_bytes, int repeat) {
  CompressionPolicy autop;
  autop.enabled = true;
  autop.level = level;
  ExtentEncoder enc;
  std::vector<char> out;
  double auto_s = 0, fixed_s = 0;
  for (size_t off = 0; off < in.bytes.size(); off += run_bytes) {
    size_t len = std::min(run_bytes, in.bytes.size() - off);
    const char* run = in.bytes.data() + off;
    Codec picked = enc.Encode(autop, run, len, &out);
    if (picked == Codec::kRaw) continue;
    CompressionPolicy fixed = autop;
    fixed.filter = picked == Codec::kZstd         ? ByteFilter::kNone
                   : picked == Codec::kZstdGroup2 ? ByteFilter::kGroup2
                                                  : ByteFilter::kGroup4;
    double best_auto = 0, best_fixed = 0;
    for (int pass = 0; pass < repeat; ++pass) {
      double t0 = Now();
      enc.Encode(autop, run, len, &out);
      double t1 = Now();
      enc.Encode(fixed, run, len, &out);
      double t2 = Now();
      if (pass == 0 || t1 - t0 < best_auto) best_auto = t1 - t0;
      if (pass == 0 || t2 - t1 < best_fixed) best_fixed = t2 - t1;
    }
    auto_s += best_auto;
    fixed_s += best_fixed;
  }
  return fixed_s > 0 ? (auto_s / fixed_s - 1) * 100 : NAN;
}

std::string Picks(const EncoderStats& s) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "raw:%llu zstd:%llu g2:%llu g4:%llu",
                static_cast<unsigned long long>(s.by_codec[0]),
                static_cast<unsigned long long>(s.by_codec[1]),
                static_cast<unsigned long long>(s.by_codec[2]),
                static_cast<unsigned long long>(s.by_codec[3]));
  return buf;
}

void PrintTable(const std::vector<Row>& rows) {
  std::printf("%-14s %-28s %7s %5s %-6s %6s %6s %9s %9s  %s\n", "kind", "input", "MiB", "level",
              "mode", "ratio", "exact", "enc MB/s", "dec MB/s", "runs by codec");
  for (const Row& r : rows) {
    std::string name = r.input->name;
    if (name.size() > 28) name = "..." + name.substr(name.size() - 25);
    std::string extra = Picks(r.stats);
    if (!std::isnan(r.overhead_pct)) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "  (choosing: %+.1f%%)", r.overhead_pct);
      extra += buf;
    }
    std::printf("%-14s %-28s %7.1f %5d %-6s %6.3f %6.3f %9.1f %9.1f  %s\n", r.input->kind.c_str(),
                name.c_str(), r.input->bytes.size() / 1048576.0, r.level, r.mode, r.ratio,
                r.exact_ratio, r.encode_mbps, r.decode_mbps, extra.c_str());
  }
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void PrintJson(const std::vector<Row>& rows) {
  std::printf("[\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const EncoderStats& s = r.stats;
    std::printf(
        "  {\"kind\":%s,\"input\":%s,\"bytes\":%zu,\"level\":%d,\"mode\":\"%s\","
        "\"ratio\":%.4f,\"exact_ratio\":%.4f,\"encode_mbps\":%.1f,\"decode_mbps\":%.1f,"
        "\"runs\":%llu,\"runs_raw\":%llu,\"picks\":{\"raw\":%llu,\"zstd\":%llu,"
        "\"group2\":%llu,\"group4\":%llu}",
        JsonString(r.input->kind).c_str(), JsonString(r.input->name).c_str(), r.input->bytes.size(),
        r.level, r.mode, r.ratio, r.exact_ratio, r.encode_mbps, r.decode_mbps,
        static_cast<unsigned long long>(s.runs), static_cast<unsigned long long>(s.runs_raw),
        static_cast<unsigned long long>(s.by_codec[0]),
        static_cast<unsigned long long>(s.by_codec[1]),
        static_cast<unsigned long long>(s.by_codec[2]),
        static_cast<unsigned long long>(s.by_codec[3]));
    if (!std::isnan(r.overhead_pct)) {
      std::printf(",\"auto_overhead_pct\":%.2f", r.overhead_pct);
    }
    std::printf("}%s\n", i + 1 < rows.size() ? "," : "");
  }
  std::printf("]\n");
}

// GB/s of the byte-grouping filter alone, widths 1 to 8, on one 1 MiB run.
void PrintGroupSpeed(int repeat) {
  constexpr size_t kLen = 1 << 20;
  std::vector<char> in = Synthetic("random", kLen + 1), grouped(kLen), back(kLen);
  std::printf("%-6s %12s %12s %22s\n", "width", "group GB/s", "ungroup GB/s",
              "group GB/s (in + 1)");
  for (unsigned w = 1; w <= 8; ++w) {
    double best[3] = {0, 0, 0};
    for (int pass = 0; pass < repeat; ++pass) {
      for (int k = 0; k < 3; ++k) {
        double t0 = Now();
        for (int i = 0; i < 200; ++i) {
          if (k == 1) {
            UngroupBytes(grouped.data(), kLen, w, back.data());
          } else {
            GroupBytes(in.data() + (k == 2), kLen, w, grouped.data());
          }
        }
        double gbps = 200.0 * kLen / 1e9 / (Now() - t0);
        best[k] = std::max(best[k], gbps);
      }
    }
    if (std::memcmp(back.data(), in.data(), kLen) != 0) {
      std::fprintf(stderr, "ckptfs-compress-bench: width %u does not round-trip\n", w);
      std::exit(1);
    }
    std::printf("%-6u %12.1f %12.1f %22.1f\n", w, best[0], best[1], best[2]);
  }
}

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: ckptfs-compress-bench [options] [KIND=]FILE...\n"
               "  encodes each input in runs with plain zstd, group2, group4 and auto and\n"
               "  prints the stored ratio (4 KiB blocks per run, raw fallback) and MB/s\n"
               "  --level N[,N...]  zstd levels to measure (default 3)\n"
               "  --synthetic       add synthetic bf16, fp32 and random inputs (16 MiB each)\n"
               "  --max-mib N       read at most N MiB of each file (default 64)\n"
               "  --run-kib N       run size (default 1024, the data log's largest run)\n"
               "  --repeat N        timings per run, the fastest kept (default 3)\n"
               "  --json            machine-readable output\n"
               "  --group-speed     only time the byte-grouping filter itself\n"
               "  KIND=FILE         labels the input (e.g. bf16-weights=model.bin)\n");
}

bool ParseLevels(const char* text, std::vector<int>* levels) {
  levels->clear();
  std::string s = text;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string part =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    Result<CompressionPolicy> p = ParseCompressionPolicy("zstd:" + part);
    if (!p.ok()) {
      std::fprintf(stderr, "ckptfs-compress-bench: %s\n", p.status().ToString().c_str());
      return false;
    }
    levels->push_back(p->level);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return !levels->empty();
}

int Main(int argc, char** argv) {
  std::vector<int> levels = {3};
  bool json = false, synthetic = false, group_speed = false;
  size_t max_bytes = 64ull << 20, run_bytes = 1 << 20;
  int repeat = 3;
  static const option kLong[] = {{"level", required_argument, nullptr, 'l'},
                                 {"synthetic", no_argument, nullptr, 's'},
                                 {"max-mib", required_argument, nullptr, 'm'},
                                 {"run-kib", required_argument, nullptr, 'r'},
                                 {"repeat", required_argument, nullptr, 'n'},
                                 {"json", no_argument, nullptr, 'j'},
                                 {"group-speed", no_argument, nullptr, 'g'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "l:sm:r:n:jgh", kLong, nullptr)) != -1) {
    switch (c) {
      case 'l':
        if (!ParseLevels(optarg, &levels)) return 2;
        break;
      case 's': synthetic = true; break;
      case 'm': max_bytes = std::strtoull(optarg, nullptr, 10) << 20; break;
      case 'r': run_bytes = std::strtoull(optarg, nullptr, 10) << 10; break;
      case 'n': repeat = std::atoi(optarg); break;
      case 'j': json = true; break;
      case 'g': group_speed = true; break;
      case 'h': Usage(stdout); return 0;
      default: Usage(stderr); return 2;
    }
  }
  if (group_speed) {
    PrintGroupSpeed(repeat);
    return 0;
  }
  if (run_bytes == 0 || max_bytes == 0 || repeat < 1 || (optind == argc && !synthetic)) {
    Usage(stderr);
    return 2;
  }

  std::vector<Input> inputs;
  for (int i = optind; i < argc; ++i) {
    std::string arg = argv[i];
    Input in;
    size_t eq = arg.find('=');
    in.name = eq == std::string::npos ? arg : arg.substr(eq + 1);
    in.kind = eq == std::string::npos ? "-" : arg.substr(0, eq);
    if (!ReadFile(in.name, max_bytes, &in.bytes)) {
      std::fprintf(stderr, "ckptfs-compress-bench: cannot read %s: %s\n", in.name.c_str(),
                   std::strerror(errno));
      return 1;
    }
    if (in.bytes.empty()) {
      std::fprintf(stderr, "ckptfs-compress-bench: %s is empty\n", in.name.c_str());
      return 1;
    }
    inputs.push_back(std::move(in));
  }
  if (synthetic) {
    for (const char* kind : {"bf16", "fp32", "random"}) {
      inputs.push_back({std::string("synthetic:") + kind, std::string("synthetic-") + kind,
                        Synthetic(kind, std::min<size_t>(max_bytes, 16 << 20))});
    }
  }

  std::vector<Row> rows;
  for (const Input& in : inputs) {
    for (int level : levels) {
      for (const Mode& mode : kModes) rows.push_back(Measure(in, level, mode, run_bytes, repeat));
      Row& autorow = rows.back();
      autorow.overhead_pct = AutoOverheadPct(in, level, run_bytes, repeat);
    }
  }
  if (json) {
    PrintJson(rows);
  } else {
    PrintTable(rows);
  }
  return 0;
}

}  // namespace
}  // namespace ckptfs

int main(int argc, char** argv) { return ckptfs::Main(argc, argv); }
