// The command line of ckpt-replay on CLI11. Model and layout overrides are
// collected first and applied to the preset after, so their order on the
// command line relative to --workload does not matter.
#include "options.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>

#include "common/command_line.h"
#include "rank_range.h"
#include "trace.h"

namespace ckptfs::replay {
namespace {

Status UsageError(const std::string& message) { return Status::Invalid(message); }

// What the command line says beyond the fields of Options.
struct Given {
  std::string workload;
  bool plan = false;
  bool list_workloads = false;
  bool restore = false;
  bool no_fsync = false;
  bool no_drop_caches = false;
  // Overrides of the preset, applied where given.
  std::optional<uint64_t> layers, hidden, ffn, heads, kv_heads, vocab;
  std::optional<int> tp, pp, dp, zero;
  std::optional<DType> model_dtype, optimizer_dtype;
  std::optional<double> scale;
  std::optional<PayloadKind> payload;
  std::optional<bool> fsync;
  // A share of the ranks: --ranks, or --node with --nodes.
  std::optional<RankRange> ranks;
  std::optional<int> node, nodes;
};

Result<bool> ParseOnOff(std::string_view text) {
  if (text == "on" || text == "true" || text == "1") return true;
  if (text == "off" || text == "false" || text == "0") return false;
  return UsageError("takes on|off, got '" + std::string(text) + "'");
}

// An option whose text `parse` turns into `*target`. What `parse` rejects is
// reported as CLI11 reports a failed check: "NAME: message".
template <typename Target, typename Parse>
CLI::Option* AddParsed(CLI::App& app, const std::string& name, Target* target, Parse parse,
                       const std::string& help) {
  return app.add_option_function<std::string>(
      name,
      [name, target, parse](const std::string& text) {
        auto value = parse(text);
        if (!value.ok()) throw CLI::ValidationError(name, value.status().message());
        *target = std::move(value).value();
      },
      help);
}

constexpr const char* kDescription =
    "Reproduces DLIO-style LLM checkpoint bursts, replays recorded traces and converts strace logs into "
    "traces.";

constexpr const char* kSynopsis = R"(usage:
  ckpt-replay --workload NAME --plan [--json [FILE]] [model/layout options]
  ckpt-replay --workload NAME --dir DIR [--scale F] [--checkpoints N] [--passes N]
              [--keep N] [--restore] [--restore-mode read|mmap] [--json FILE]
              [--emit-trace FILE] [options]
  ckpt-replay --workload NAME --dir DIR --restore-only [--restore-mode read|mmap] [options]
  ckpt-replay --workload NAME --emit-trace FILE [--checkpoints N] [--restore] [options]
  (the --workload modes above run a share of the ranks with --ranks A-B or --node I --nodes N)
  ckpt-replay --trace FILE --dir DIR [--timing] [--verify] [--payload KIND] [--json FILE]
  ckpt-replay --from-strace STRACE_LOG --emit-trace FILE [--strace-root DIR]
  ckpt-replay --list-workloads | --help
)";

// Declares the options of ckpt-replay on `app`, bound to `options` and `given`.
void Declare(tools::ToolApp& app, Options& options, Given& given) {
  using tools::IntegerAtLeast;
  std::string workloads;
  for (const std::string& name : PresetNames()) workloads += "    " + name + "\n";
  app.Synopsis(kSynopsis);
  app.footer("workloads:\n" + workloads +
             "\nexit status: 0 ok, 1 run failed (I/O error, content mismatch), 2 usage or input error");

  app.add_option("--workload", given.workload, "the workload preset to run, plan or trace (below)")
      ->type_name("NAME");
  app.add_flag("--plan", given.plan, "print the files and sizes of one checkpoint; no I/O");
  app.add_option("--dir", options.burst.dir, "where checkpoints are written, or a trace is replayed")
      ->type_name("DIR");
  app.add_option("--emit-trace", options.emit_trace_path, "write the trace of the workload or strace log")
      ->type_name("FILE");
  app.add_option("--trace", options.trace_path, "replay this trace")->type_name("FILE");
  app.add_option("--from-strace", options.strace_path, "convert this strace log into a trace")
      ->type_name("STRACE_LOG");
  app.add_flag("--list-workloads", given.list_workloads, "print the names of the workload presets");
  app.add_option("--json", options.json_path, "also write results as JSON (\"-\" or no FILE: stdout)")
      ->expected(0, 1)
      ->type_name("[FILE]");
  app.add_flag("--quiet", options.quiet, "no progress bar (it is only drawn when stderr is a tty)");

  // A whole number N >= min_value, listed in `group`.
  auto whole = [&app](const std::string& group, const char* name, auto& target, int min_value, const char* help) {
    app.add_option(name, target, help)->type_name("N")->check(IntegerAtLeast(min_value))->group(group);
  };

  const std::string run = "run options";
  AddParsed(app, "--scale", &given.scale, ParseScale,
            "shrink every tensor by F (0.0003 or 1/1000); file count, layout and concurrency stay "
            "(small-files: F scales the file count and the sizes stay)")
      ->type_name("F")
      ->group(run);
  whole(run, "--checkpoints", options.burst.checkpoints, 1, "checkpoints per pass (default 1)");
  whole(run, "--passes", options.burst.passes, 1, "repeat the write (+restore) cycle N times (epochs)");
  whole(run, "--keep", options.burst.keep, 0, "keep at most N checkpoints: delete the oldest before a new one");
  whole(run, "--keep-every", options.burst.keep_every, 1,
        "every Nth checkpoint (counted across passes) is a milestone: kept for good, not counted by --keep");
  app.add_option("--appender-rate", options.burst.appender_bytes_per_s,
                 "meanwhile append a training log (DIR/train.log) at R bytes/s (1M, 64K, ...), fsynced every "
                 "second")
      ->type_name("R")
      ->transform(tools::ByteSize())
      ->group(run);
  app.add_flag("--restore", given.restore,
               "read every checkpoint back after dropping the page cache, all ranks at once, and verify "
               "content")
      ->group(run);
  AddParsed(app, "--restore-mode", &options.burst.restore_mode, ParseRestoreMode,
            "read (default): pread() into a buffer; mmap: map each file and compare the mapped pages, as "
            "torch.load(mmap=True) reads")
      ->type_name("M")
      ->group(run);
  app.add_flag("--restore-only", options.burst.restore_only,
               "no writes: restore the checkpoints an earlier run with the same workload options left in "
               "--dir")
      ->group(run);
  AddParsed(app, "--payload", &given.payload, ParsePayloadKind,
            "random (default), zeros, or bf16 / fp32: shaped like trained weights (compressible as real "
            "checkpoints are)")
      ->type_name("KIND")
      ->group(run);
  AddParsed(app, "--fsync", &given.fsync, ParseOnOff, "fsync each file (default on; --no-fsync = off)")
      ->type_name("on|off")
      ->group(run);
  app.add_flag("--no-fsync", given.no_fsync, "do not fsync the files")->group(run);
  app.add_option("--max-write", options.burst.max_write,
                 "split tensor writes above this size, 1 to 1G (default 64M)")
      ->type_name("BYTES")
      ->transform(tools::ByteSize())
      ->check(IntegerAtLeast(1))
      ->check(CLI::Range(uint64_t{1}, kMaxTraceIoBytes))  // what a trace may hold
      ->group(run);
  app.add_flag("--no-drop-caches", given.no_drop_caches, "do not drop the page cache before restores")
      ->group(run);

  const std::string nodes = "multi-node options (one node's share of the ranks)";
  AddParsed(app, "--ranks", &given.ranks, ParseRankRange,
            "run only the workload's global ranks A to B (0-based, inclusive), or rank A alone, each writing "
            "the files it writes in a full run; with --plan, --restore-only and --emit-trace too")
      ->type_name("A-B")
      ->group(nodes);
  app.add_option("--node", given.node, "run node I's share of the ranks (0-based; needs --nodes)")
      ->type_name("I")
      ->check(IntegerAtLeast(0))
      ->group(nodes);
  whole(nodes, "--nodes", given.nodes, 1,
        "split the ranks into N contiguous blocks, as equal as possible and the larger first (8 ranks over 3 "
        "nodes: 0-2, 3-5, 6-7), so N nodes run every rank once");

  const std::string model = "model/layout options (override the preset)";
  whole(model, "--layers", given.layers, 1, "transformer layers");
  whole(model, "--hidden", given.hidden, 1, "hidden size");
  whole(model, "--ffn", given.ffn, 1, "feed-forward hidden size");
  whole(model, "--heads", given.heads, 1, "attention heads");
  whole(model, "--kv-heads", given.kv_heads, 1, "key/value heads");
  whole(model, "--vocab", given.vocab, 1, "vocabulary size");
  whole(model, "--tp", given.tp, 1, "tensor parallel ranks");
  whole(model, "--pp", given.pp, 1, "pipeline parallel stages");
  whole(model, "--dp", given.dp, 1, "data parallel replicas");
  whole(model, "--zero", given.zero, 0, "ZeRO stage");
  AddParsed(app, "--model-dtype", &given.model_dtype, ParseDType, "weights: int8, fp16, bf16, fp32 or fp64")
      ->type_name("T")
      ->group(model);
  AddParsed(app, "--optimizer-dtype", &given.optimizer_dtype, ParseDType,
            "optimizer state: int8, fp16, bf16, fp32 or fp64")
      ->type_name("T")
      ->group(model);

  const std::string trace = "trace options";
  app.add_flag("--timing", options.timing, "wait for each operation's recorded time")->group(trace);
  app.add_flag("--verify", options.verify, "check read data against the payload a replayed write used")
      ->group(trace);
  app.add_option("--strace-root", options.strace_root,
                 "keep only paths under DIR (default: where the program wrote)")
      ->type_name("DIR")
      ->group(trace);
}

// The share of the ranks the command line asks for, checked against the
// workload's `world_size` ranks; nullopt: all of them.
Result<std::optional<RankRange>> ChosenRanks(const Given& given, int world_size) {
  if (given.ranks) {
    if (Status st = CheckRankRange(*given.ranks, world_size); !st.ok()) return UsageError("--ranks: " + st.message());
    return given.ranks;
  }
  if (!given.nodes) return std::optional<RankRange>();
  const int node = *given.node, nodes = *given.nodes;
  if (node >= nodes) {
    return UsageError("--node: must be below --nodes " + std::to_string(nodes) + " (nodes count from 0), got " +
                      std::to_string(node));
  }
  if (nodes > world_size) {
    return UsageError("--nodes: " + std::to_string(nodes) + " nodes for the workload's " + std::to_string(world_size) +
                      " ranks; each node needs a rank");
  }
  return std::optional<RankRange>(NodeRanks(node, nodes, world_size));
}

// An option given that is not among those `mode` uses (the first declared
// here), for the usage error that names it; empty when there is none. A
// trace replay or an strace conversion given a workload's options would
// otherwise run without them and never say so.
std::string FirstUnused(const CLI::App& app, std::initializer_list<std::string_view> uses) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0) continue;
    const std::string name = option->get_name();
    if (std::find(uses.begin(), uses.end(), name) == uses.end()) return name;
  }
  return "";
}

void ApplyOverrides(const Given& given, WorkloadSpec& spec) {
  auto set = [](auto& field, const auto& value) {
    if (value) field = *value;
  };
  set(spec.shape.layers, given.layers);
  set(spec.shape.hidden, given.hidden);
  set(spec.shape.ffn_hidden, given.ffn);
  set(spec.shape.attention_heads, given.heads);
  set(spec.shape.kv_heads, given.kv_heads);
  set(spec.shape.vocab, given.vocab);
  set(spec.layout.tensor, given.tp);
  set(spec.layout.pipeline, given.pp);
  set(spec.layout.data, given.dp);
  set(spec.layout.zero_stage, given.zero);
  set(spec.model_dtype, given.model_dtype);
  set(spec.optimizer_dtype, given.optimizer_dtype);
  set(spec.scale, given.scale);
  set(spec.payload, given.payload);
  set(spec.fsync, given.fsync);
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
    if (!parse(text, value)) return UsageError("needs a number or a fraction like 1/1000, got '" + std::string(text) + "'");
  } else {
    double num = 0, den = 0;
    if (!parse(text.substr(0, slash), num) || !parse(text.substr(slash + 1), den) || den == 0) {
      return UsageError("fraction must be N/D with D != 0, got '" + std::string(text) + "'");
    }
    value = num / den;
  }
  if (!(value > 0) || value > 1) return UsageError("must be in (0, 1], got '" + std::string(text) + "'");
  return value;
}

Result<Options> ParseOptions(std::span<const std::string_view> args) {
  Options options;
  Given given;
  tools::ToolApp app("ckpt-replay", kDescription);
  Declare(app, options, given);
  CKPTFS_ASSIGN_OR_RETURN(std::optional<std::string> help, tools::ParseArgs(app, args));
  if (help) {
    options.mode = Mode::kHelp;
    return options;
  }
  options.json = app.count("--json") > 0;
  options.burst.restore = given.restore || options.burst.restore_only;
  options.burst.drop_caches = !given.no_drop_caches;
  if (given.list_workloads) {
    options.mode = Mode::kListWorkloads;
    return options;
  }
  const bool has_workload = app.count("--workload") > 0;
  int sources = has_workload + !options.trace_path.empty() + !options.strace_path.empty();
  if (sources == 0) return UsageError("nothing to do: give --workload, --trace or --from-strace");
  if (sources > 1) return UsageError("--workload, --trace and --from-strace exclude each other");
  if ((given.ranks || given.node || given.nodes) && !has_workload) {
    return UsageError("--ranks, --node and --nodes apply to --workload");
  }
  if (given.ranks && (given.node || given.nodes)) return UsageError("--ranks and --node/--nodes exclude each other");
  if (given.node && !given.nodes) return UsageError("--node needs --nodes N");
  if (given.nodes && !given.node) return UsageError("--nodes needs --node I");

  if (!options.strace_path.empty()) {
    if (options.emit_trace_path.empty()) return UsageError("--from-strace needs --emit-trace FILE");
    if (std::string unused = FirstUnused(app, {"--from-strace", "--emit-trace", "--strace-root", "--quiet"});
        !unused.empty()) {
      return UsageError(unused + " does not apply to --from-strace");
    }
    options.mode = Mode::kConvertStrace;
    return options;
  }
  if (!options.trace_path.empty()) {
    if (options.burst.dir.empty()) return UsageError("--trace needs --dir DIR");
    if (std::string unused =
            FirstUnused(app, {"--trace", "--dir", "--timing", "--verify", "--payload", "--json", "--quiet"});
        !unused.empty()) {
      return UsageError(unused + " does not apply to --trace");
    }
    options.mode = Mode::kReplayTrace;
    if (given.payload) options.spec.payload = *given.payload;
    return options;
  }
  if (options.timing || options.verify) return UsageError("--timing and --verify apply to --trace");
  if (!options.strace_root.empty()) return UsageError("--strace-root applies to --from-strace");
  if (given.no_fsync && given.fsync.value_or(false)) return UsageError("--no-fsync and --fsync on exclude each other");
  CKPTFS_ASSIGN_OR_RETURN(options.spec, FindPreset(given.workload));
  if (given.no_fsync) options.spec.fsync = false;
  ApplyOverrides(given, options.spec);
  if (Status st = ValidateSpec(options.spec); !st.ok()) return UsageError(st.message());
  CKPTFS_ASSIGN_OR_RETURN(options.burst.ranks, ChosenRanks(given, options.spec.layout.WorldSize()));
  if (options.burst.restore_only) {
    if (options.burst.dir.empty()) return UsageError("--restore-only needs --dir DIR");
    if (!options.emit_trace_path.empty()) return UsageError("--restore-only writes no trace");
    if (options.burst.keep > 0) return UsageError("--restore-only cannot apply --keep");
  }
  if (given.plan) {
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
  Options options;
  Given given;
  tools::ToolApp app("ckpt-replay", kDescription);
  Declare(app, options, given);
  return app.help();
}

}  // namespace ckptfs::replay
