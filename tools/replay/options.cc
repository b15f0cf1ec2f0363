// Overrides are collected first and applied after the preset, so their order
// on the command line relative to --workload does not matter.
#include "options.h"

#include <charconv>
#include <map>
#include <vector>

namespace ckptfs::replay {
namespace {

Status UsageError(const std::string& message) { return Status::Invalid(message); }

template <typename T>
Result<T> ParseInteger(std::string_view option, std::string_view text, T min_value) {
  T value{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < min_value) {
    return UsageError(std::string(option) + " needs an integer >= " + std::to_string(min_value) + ", got '" +
                      std::string(text) + "'");
  }
  return value;
}

Result<bool> ParseOnOff(std::string_view option, std::string_view text) {
  if (text == "on" || text == "true" || text == "1") return true;
  if (text == "off" || text == "false" || text == "0") return false;
  return UsageError(std::string(option) + " takes on|off, got '" + std::string(text) + "'");
}

// Options that take a value; the rest are flags.
const std::vector<std::string_view>& ValuedOptions() {
  static const std::vector<std::string_view> kValued = {
      "--workload", "--dir", "--scale", "--checkpoints", "--passes", "--keep", "--keep-every",
      "--appender-rate", "--max-write",
      "--payload", "--fsync", "--emit-trace", "--trace", "--from-strace", "--strace-root",
      "--layers", "--hidden", "--ffn", "--heads", "--kv-heads", "--vocab", "--tp", "--pp", "--dp",
      "--zero", "--model-dtype", "--optimizer-dtype", "--restore-mode"};
  return kValued;
}

const std::vector<std::string_view>& FlagOptions() {
  static const std::vector<std::string_view> kFlags = {
      "--help", "-h", "--list-workloads", "--plan", "--restore", "--timing", "--verify",
      "--quiet", "--no-fsync", "--no-drop-caches", "--json", "--restore-only"};
  return kFlags;
}

bool Contains(const std::vector<std::string_view>& list, std::string_view item) {
  for (std::string_view entry : list) {
    if (entry == item) return true;
  }
  return false;
}

Status ApplyOverrides(WorkloadSpec& spec, const std::map<std::string_view, std::string_view>& values) {
  auto get = [&](std::string_view key) -> const std::string_view* {
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second;
  };
  struct ShapeField {
    std::string_view option;
    uint64_t* field;
  };
  for (ShapeField f : {ShapeField{"--layers", &spec.shape.layers}, ShapeField{"--hidden", &spec.shape.hidden},
                       ShapeField{"--ffn", &spec.shape.ffn_hidden}, ShapeField{"--heads", &spec.shape.attention_heads},
                       ShapeField{"--kv-heads", &spec.shape.kv_heads}, ShapeField{"--vocab", &spec.shape.vocab}}) {
    if (const auto* v = get(f.option)) {
      CKPTFS_ASSIGN_OR_RETURN(*f.field, ParseInteger<uint64_t>(f.option, *v, 1));
    }
  }
  struct LayoutField {
    std::string_view option;
    int* field;
    int min_value;
  };
  for (LayoutField f : {LayoutField{"--tp", &spec.layout.tensor, 1}, LayoutField{"--pp", &spec.layout.pipeline, 1},
                        LayoutField{"--dp", &spec.layout.data, 1}, LayoutField{"--zero", &spec.layout.zero_stage, 0}}) {
    if (const auto* v = get(f.option)) {
      CKPTFS_ASSIGN_OR_RETURN(*f.field, ParseInteger<int>(f.option, *v, f.min_value));
    }
  }
  if (const auto* v = get("--model-dtype")) {
    CKPTFS_ASSIGN_OR_RETURN(spec.model_dtype, ParseDType(*v));
  }
  if (const auto* v = get("--optimizer-dtype")) {
    CKPTFS_ASSIGN_OR_RETURN(spec.optimizer_dtype, ParseDType(*v));
  }
  if (const auto* v = get("--scale")) {
    CKPTFS_ASSIGN_OR_RETURN(spec.scale, ParseScale(*v));
  }
  if (const auto* v = get("--payload")) {
    CKPTFS_ASSIGN_OR_RETURN(spec.payload, ParsePayloadKind(*v));
  }
  if (const auto* v = get("--fsync")) {
    CKPTFS_ASSIGN_OR_RETURN(spec.fsync, ParseOnOff("--fsync", *v));
  }
  return Status::Ok();
}

}  // namespace

Result<double> ParseScale(std::string_view text) {
  auto parse = [](std::string_view t, double& out) {
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return ec == std::errc() && ptr == t.data() + t.size();
  };
  double value = 0;
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    if (!parse(text, value)) return UsageError("--scale needs a number or a fraction like 1/1000, got '" + std::string(text) + "'");
  } else {
    double num = 0, den = 0;
    if (!parse(text.substr(0, slash), num) || !parse(text.substr(slash + 1), den) || den == 0) {
      return UsageError("--scale fraction must be N/D with D != 0, got '" + std::string(text) + "'");
    }
    value = num / den;
  }
  if (!(value > 0) || value > 1) return UsageError("--scale must be in (0, 1], got '" + std::string(text) + "'");
  return value;
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  uint64_t multiplier = 1;
  std::string_view digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': multiplier = 1ull << 10; break;
      case 'M': case 'm': multiplier = 1ull << 20; break;
      case 'G': case 'g': multiplier = 1ull << 30; break;
      default: break;
    }
    if (multiplier != 1) digits.remove_suffix(1);
  }
  CKPTFS_ASSIGN_OR_RETURN(uint64_t value, ParseInteger<uint64_t>("--max-write", digits, 1));
  return value * multiplier;
}

Result<Options> ParseOptions(std::span<const std::string_view> args) {
  Options options;
  std::map<std::string_view, std::string_view> values;
  std::map<std::string_view, bool> flags;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    std::string_view inline_value;
    bool has_inline = false;
    if (size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_inline = true;
    }
    if (arg == "--json") {  // the file is optional: "--json" alone means stdout
      flags[arg] = true;
      if (has_inline) {
        options.json_path = std::string(inline_value);
      } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
        options.json_path = std::string(args[++i]);
      }
      continue;
    }
    if (Contains(ValuedOptions(), arg)) {
      if (has_inline) {
        values[arg] = inline_value;
      } else if (i + 1 < args.size()) {
        values[arg] = args[++i];
      } else {
        return UsageError(std::string(arg) + " needs a value");
      }
      continue;
    }
    if (Contains(FlagOptions(), arg) && !has_inline) {
      flags[arg] = true;
      continue;
    }
    return UsageError("unknown option '" + std::string(args[i]) + "'");
  }
  auto value = [&](std::string_view key) { return values.count(key) ? std::string(values[key]) : std::string(); };

  options.json = flags.count("--json") > 0;
  options.timing = flags.count("--timing") > 0;
  options.verify = flags.count("--verify") > 0;
  options.quiet = flags.count("--quiet") > 0;
  options.emit_trace_path = value("--emit-trace");
  options.trace_path = value("--trace");
  options.strace_path = value("--from-strace");
  options.strace_root = value("--strace-root");
  options.burst.dir = value("--dir");
  options.burst.restore_only = flags.count("--restore-only") > 0;
  options.burst.restore = flags.count("--restore") > 0 || options.burst.restore_only;
  if (values.count("--restore-mode")) {
    CKPTFS_ASSIGN_OR_RETURN(options.burst.restore_mode, ParseRestoreMode(values["--restore-mode"]));
  }
  options.burst.drop_caches = flags.count("--no-drop-caches") == 0;
  if (values.count("--checkpoints")) {
    CKPTFS_ASSIGN_OR_RETURN(options.burst.checkpoints, ParseInteger<int>("--checkpoints", values["--checkpoints"], 1));
  }
  if (values.count("--passes")) {
    CKPTFS_ASSIGN_OR_RETURN(options.burst.passes, ParseInteger<int>("--passes", values["--passes"], 1));
  }
  if (values.count("--keep")) {
    CKPTFS_ASSIGN_OR_RETURN(options.burst.keep, ParseInteger<int>("--keep", values["--keep"], 0));
  }
  if (values.count("--keep-every")) {
    CKPTFS_ASSIGN_OR_RETURN(options.burst.keep_every,
                            ParseInteger<int>("--keep-every", values["--keep-every"], 1));
  }
  if (values.count("--appender-rate")) {
    CKPTFS_ASSIGN_OR_RETURN(options.burst.appender_bytes_per_s,
                            ParseByteSize(values["--appender-rate"]));
  }
  if (values.count("--max-write")) {
    CKPTFS_ASSIGN_OR_RETURN(options.burst.max_write, ParseByteSize(values["--max-write"]));
  }

  if (flags.count("--help") || flags.count("-h")) {
    options.mode = Mode::kHelp;
    return options;
  }
  if (flags.count("--list-workloads")) {
    options.mode = Mode::kListWorkloads;
    return options;
  }
  const bool has_workload = values.count("--workload") > 0;
  int sources = has_workload + !options.trace_path.empty() + !options.strace_path.empty();
  if (sources == 0) return UsageError("nothing to do: give --workload, --trace or --from-strace");
  if (sources > 1) return UsageError("--workload, --trace and --from-strace exclude each other");

  if (!options.strace_path.empty()) {
    if (options.emit_trace_path.empty()) return UsageError("--from-strace needs --emit-trace FILE");
    options.mode = Mode::kConvertStrace;
    return options;
  }
  if (!options.trace_path.empty()) {
    if (options.burst.dir.empty()) return UsageError("--trace needs --dir DIR");
    options.mode = Mode::kReplayTrace;
    if (values.count("--payload")) {
      CKPTFS_ASSIGN_OR_RETURN(options.spec.payload, ParsePayloadKind(values["--payload"]));
    }
    return options;
  }
  if (options.timing || options.verify) return UsageError("--timing and --verify apply to --trace");
  CKPTFS_ASSIGN_OR_RETURN(options.spec, FindPreset(values["--workload"]));
  if (flags.count("--no-fsync")) options.spec.fsync = false;
  if (Status st = ApplyOverrides(options.spec, values); !st.ok()) return st;
  if (Status st = ValidateSpec(options.spec); !st.ok()) return UsageError(st.message());
  if (options.burst.restore_only) {
    if (options.burst.dir.empty()) return UsageError("--restore-only needs --dir DIR");
    if (!options.emit_trace_path.empty()) return UsageError("--restore-only writes no trace");
    if (options.burst.keep > 0) return UsageError("--restore-only cannot apply --keep");
  }
  if (flags.count("--plan")) {
    options.mode = Mode::kPlan;
  } else if (!options.burst.dir.empty()) {
    options.mode = Mode::kRunWorkload;
  } else if (!options.emit_trace_path.empty()) {
    options.mode = Mode::kEmitWorkloadTrace;
  } else {
    return UsageError("--workload needs --plan, --dir DIR or --emit-trace FILE");
  }
  return options;
}

std::string UsageText() {
  std::string presets;
  for (const std::string& name : PresetNames()) presets += "    " + name + "\n";
  return R"(usage:
  ckpt-replay --workload NAME --plan [--json [FILE]] [model/layout options]
  ckpt-replay --workload NAME --dir DIR [--scale F] [--checkpoints N] [--passes N]
              [--keep N] [--restore] [--restore-mode read|mmap] [--json FILE]
              [--emit-trace FILE] [options]
  ckpt-replay --workload NAME --dir DIR --restore-only [--restore-mode read|mmap] [options]
  ckpt-replay --workload NAME --emit-trace FILE [--checkpoints N] [--restore] [options]
  ckpt-replay --trace FILE --dir DIR [--timing] [--verify] [--json FILE]
  ckpt-replay --from-strace STRACE_LOG --emit-trace FILE [--strace-root DIR]
  ckpt-replay --list-workloads | --help

run options:
  --scale F           shrink every tensor by F (0.0003 or 1/1000); file count,
                      layout and concurrency stay (small-files: F scales the
                      file count and the sizes stay)
  --checkpoints N     checkpoints per pass (default 1)
  --passes N          repeat the write (+restore) cycle N times (epochs)
  --keep N            keep at most N checkpoints: delete the oldest before a new one
  --keep-every N      every Nth checkpoint (counted across passes) is a milestone:
                      kept for good, not counted by --keep
  --appender-rate R   meanwhile append a training log (DIR/train.log) at R bytes/s
                      (1M, 64K, ...), fsynced every second
  --restore           read every checkpoint back after dropping the page cache,
                      all ranks at once, and verify content
  --restore-mode M    read (default): pread() into a buffer; mmap: map each file
                      and compare the mapped pages, as torch.load(mmap=True) reads
  --restore-only      no writes: restore the checkpoints an earlier run with the
                      same workload options left in --dir
  --payload KIND      random (default), zeros, or bf16 / fp32: shaped like
                      trained weights (compressible as real checkpoints are)
  --fsync on|off      fsync each file (default on; --no-fsync = off)
  --max-write BYTES   split tensor writes above this size (default 64M)
  --no-drop-caches    do not drop the page cache before restores
  --json FILE         also write results as JSON ("-" or no FILE: stdout)
  --quiet             no progress bar (it is only drawn when stderr is a tty)

model/layout options (override the preset):
  --layers N --hidden N --ffn N --heads N --kv-heads N --vocab N
  --tp N --pp N --dp N --zero STAGE --model-dtype T --optimizer-dtype T
  (T: int8 fp16 bf16 fp32 fp64)

trace options:
  --timing            wait for each operation's recorded time
  --verify            check read data against the payload a replayed write used
  --strace-root DIR   keep only paths under DIR (default: where the program wrote)

workloads:
)" + presets + R"(
exit status: 0 ok, 1 run failed (I/O error, content mismatch), 2 usage or input error
)";
}

}  // namespace ckptfs::replay
