// ckptfs-compress-bench: what the run codecs make of checkpoint bytes.
//
// Splits each input into runs the way the data log stores them (1 MiB by
// default), encodes every run with each filter (plain zstd, group2, group4,
// auto) through the store's own ExtentEncoder and decodes it back with
// DecodeRun, and prints the ratio as the store counts it: every run rounded
// up to 4 KiB blocks, runs that do not save enough stored raw. One thread;
// MB/s are 10^6 bytes of file data per second of the thread's CPU time, so
// that other work on the machine does not count against the codec.
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

#include <nlohmann/json.hpp>

#include "common/command_line.h"
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

// `value` to `decimals` places: the precision the measurement carries.
double Rounded(double value, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

void PrintJson(const std::vector<Row>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    const EncoderStats& s = r.stats;
    nlohmann::ordered_json row = {
        {"kind", r.input->kind},
        {"input", r.input->name},
        {"bytes", r.input->bytes.size()},
        {"level", r.level},
        {"mode", r.mode},
        {"ratio", Rounded(r.ratio, 4)},
        {"exact_ratio", Rounded(r.exact_ratio, 4)},
        {"encode_mbps", Rounded(r.encode_mbps, 1)},
        {"decode_mbps", Rounded(r.decode_mbps, 1)},
        {"runs", s.runs},
        {"runs_raw", s.runs_raw},
        {"picks",
         {{"raw", s.by_codec[0]}, {"zstd", s.by_codec[1]}, {"group2", s.by_codec[2]}, {"group4", s.by_codec[3]}}},
    };
    if (!std::isnan(r.overhead_pct)) row["auto_overhead_pct"] = Rounded(r.overhead_pct, 2);
    out.push_back(std::move(row));
  }
  std::printf("%s\n", out.dump(2).c_str());
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

// A zstd level as the store's compress= option takes it.
CLI::Validator ZstdLevel() {
  return CLI::Validator(
      [](std::string& text) {
        Result<CompressionPolicy> policy = ParseCompressionPolicy("zstd:" + text);
        return policy.ok() ? std::string() : policy.status().message();
      },
      "");
}

int Main(int argc, char** argv) {
  std::vector<int> levels = {3};
  bool json = false, synthetic = false, group_speed = false;
  size_t max_mib = 64, run_kib = 1024;
  int repeat = 3;
  std::vector<std::string> args;
  tools::ToolApp app("ckptfs-compress-bench",
                     "Encodes each input in runs with plain zstd, group2, group4 and auto and prints the "
                     "stored ratio (4 KiB blocks per run, raw fallback) and MB/s.");
  app.add_option("-l,--level", levels, "zstd levels to measure (default 3)")
      ->type_name("N[,N...]")
      ->delimiter(',')
      ->check(ZstdLevel());
  app.add_flag("-s,--synthetic", synthetic, "add synthetic bf16, fp32 and random inputs (16 MiB each)");
  app.add_option("-m,--max-mib", max_mib, "read at most N MiB of each file (default 64)")
      ->type_name("N")
      ->check(tools::IntegerAtLeast(1));
  app.add_option("-r,--run-kib", run_kib, "run size (default 1024, the data log's largest run)")
      ->type_name("N")
      ->check(tools::IntegerAtLeast(1));
  app.add_option("-n,--repeat", repeat, "timings per run, the fastest kept (default 3)")
      ->type_name("N")
      ->check(tools::IntegerAtLeast(1));
  app.add_flag("-j,--json", json, "machine-readable output");
  app.add_flag("-g,--group-speed", group_speed, "only time the byte-grouping filter itself");
  app.add_option("FILE", args, "an input, or KIND=FILE to label it (e.g. bf16-weights=model.bin)");
  if (auto code = tools::ParseCommandLine(app, argc, argv, 2)) return *code;
  const size_t max_bytes = max_mib << 20, run_bytes = run_kib << 10;
  if (group_speed) {
    PrintGroupSpeed(repeat);
    return 0;
  }
  if (args.empty() && !synthetic) {
    std::fprintf(stderr, "ckptfs-compress-bench: no input: give FILEs or --synthetic\n"
                         "try 'ckptfs-compress-bench --help'\n");
    return 2;
  }

  std::vector<Input> inputs;
  for (const std::string& arg : args) {
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
