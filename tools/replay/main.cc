// ckpt-replay: reproduce DLIO-style LLM checkpoint bursts, replay recorded
// traces, convert strace logs into traces. Exit codes: 0 success, 1 the run
// failed (I/O error, bad content), 2 usage or malformed input.
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "burst_runner.h"
#include "options.h"
#include "plan_trace.h"
#include "progress.h"
#include "report.h"
#include "strace_convert.h"
#include "trace_replayer.h"

namespace {

using ckptfs::Status;
namespace replay = ckptfs::replay;

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int Fail(const Status& status, int code) {
  std::fprintf(stderr, "ckpt-replay: %s\n", status.ToString().c_str());
  if (code == kExitUsage) std::fprintf(stderr, "try 'ckpt-replay --help'\n");
  return code;
}

Status WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fputs(text.c_str(), stdout);
    return Status::Ok();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status::IOError("cannot write " + path);
  return Status::Ok();
}

bool ShowProgress(const replay::Options& options) {
  return !options.quiet && replay::ProgressBar::StderrIsTerminal();
}

// The ranks a workload mode runs: --ranks, --node/--nodes, or all.
replay::RankRange RanksToRun(const replay::Options& options) {
  return options.burst.ranks.value_or(replay::AllRanks(options.spec.layout.WorldSize()));
}

int RunPlan(const replay::Options& options) {
  const replay::RankRange ranks = RanksToRun(options);
  auto plan = replay::BuildCheckpointPlan(options.spec, {1, 1}, ranks);
  if (!plan.ok()) return Fail(plan.status(), kExitUsage);
  std::string text = options.json ? replay::FormatPlanJson(options.spec, ranks, *plan)
                                  : replay::FormatPlanText(options.spec, ranks, *plan);
  Status st = WriteOutput(options.json ? options.json_path : "", text);
  return st.ok() ? 0 : Fail(st, kExitFailure);
}

// Emits a workload's trace; a run emits before doing I/O so a failed run
// still leaves the trace of what it attempted.
int EmitWorkloadTrace(const replay::Options& options) {
  std::vector<replay::CheckpointPlan> plans;
  for (replay::CheckpointId id : replay::CheckpointSchedule(options.burst.checkpoints, options.burst.passes)) {
    auto plan = replay::BuildCheckpointPlan(options.spec, id, RanksToRun(options));
    if (!plan.ok()) return Fail(plan.status(), kExitUsage);
    plans.push_back(std::move(plan).value());
  }
  replay::PlanTraceOptions trace_options;
  trace_options.fsync = options.spec.fsync;
  trace_options.include_restore = options.burst.restore;
  trace_options.max_write = options.burst.max_write;
  Status st = replay::WriteTraceFile(options.emit_trace_path, replay::TraceFromPlans(plans, trace_options));
  return st.ok() ? 0 : Fail(st, kExitFailure);
}

// `spec` is null for a trace replay.
int ReportPhases(const replay::Options& options, const replay::WorkloadSpec* spec,
                 const std::vector<replay::PhaseResult>& phases) {
  bool json_to_stdout = options.json && (options.json_path.empty() || options.json_path == "-");
  std::FILE* table_out = json_to_stdout ? stderr : stdout;  // keep stdout parseable
  std::fputs(replay::FormatPhaseTable(phases).c_str(), table_out);
  if (!options.json) return 0;
  std::optional<replay::RankRange> ranks;
  if (spec != nullptr) ranks = RanksToRun(options);
  Status st = WriteOutput(options.json_path, replay::FormatPhasesJson(spec, ranks, phases));
  return st.ok() ? 0 : Fail(st, kExitFailure);
}

int RunWorkload(const replay::Options& options) {
  if (!options.emit_trace_path.empty()) {
    if (int code = EmitWorkloadTrace(options); code != 0) return code;
  }
  replay::BurstOptions burst = options.burst;
  burst.progress = ShowProgress(options);
  const replay::RankRange ranks = RanksToRun(options);
  auto plan = replay::BuildCheckpointPlan(options.spec, {1, 1}, ranks);
  if (!plan.ok()) return Fail(plan.status(), kExitUsage);
  std::string on_ranks = std::to_string(plan->ranks.size()) + " ranks";
  if (ranks != replay::AllRanks(options.spec.layout.WorldSize())) {
    on_ranks = "ranks " + replay::FormatRankRange(ranks) + " of " + std::to_string(options.spec.layout.WorldSize());
  }
  std::fprintf(stderr, "%s: %zu files, %.3f GB (%.3f GiB) per checkpoint on %s\n", options.spec.name.c_str(),
               plan->FileCount(), plan->FileBytes() / 1e9, plan->FileBytes() / 1073741824.0, on_ranks.c_str());
  auto phases = replay::RunBurst(options.spec, burst);
  if (!phases.ok()) return Fail(phases.status(), kExitFailure);
  return ReportPhases(options, &options.spec, *phases);
}

int ReplayTrace(const replay::Options& options) {
  auto trace = replay::ReadTraceFile(options.trace_path);
  if (!trace.ok()) return Fail(trace.status(), trace.status().IsNotFound() ? kExitFailure : kExitUsage);
  replay::ReplayOptions replay_options;
  replay_options.dir = options.burst.dir;
  replay_options.honor_timing = options.timing;
  replay_options.verify_reads = options.verify;
  replay_options.payload = options.spec.payload;
  replay_options.progress = ShowProgress(options);
  replay_options.label = options.trace_path.substr(options.trace_path.rfind('/') + 1);
  auto phase = replay::ReplayTrace(*trace, replay_options);
  if (!phase.ok()) return Fail(phase.status(), kExitFailure);
  return ReportPhases(options, nullptr, {*phase});
}

int ConvertStrace(const replay::Options& options) {
  replay::StraceConvertOptions convert;
  convert.root = options.strace_root;
  replay::StraceConvertStats stats;
  auto trace = replay::ConvertStraceFile(options.strace_path, convert, &stats);
  if (!trace.ok()) return Fail(trace.status(), trace.status().IsNotFound() ? kExitFailure : kExitUsage);
  Status st = replay::WriteTraceFile(options.emit_trace_path, *trace);
  if (!st.ok()) return Fail(st, kExitFailure);
  std::fprintf(stderr, "converted %zu lines: %zu operations under %s on %d ranks (%zu syscalls ignored)\n",
               stats.lines, stats.syscalls_kept, stats.root.c_str(), trace->RankCount(), stats.syscalls_ignored);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  auto options = replay::ParseOptions(args);
  if (!options.ok()) return Fail(options.status(), kExitUsage);
  switch (options->mode) {
    case replay::Mode::kHelp: std::fputs(replay::UsageText().c_str(), stdout); return 0;
    case replay::Mode::kListWorkloads:
      for (const std::string& name : replay::PresetNames()) std::printf("%s\n", name.c_str());
      return 0;
    case replay::Mode::kPlan: return RunPlan(*options);
    case replay::Mode::kRunWorkload: return RunWorkload(*options);
    case replay::Mode::kEmitWorkloadTrace: return EmitWorkloadTrace(*options);
    case replay::Mode::kReplayTrace: return ReplayTrace(*options);
    case replay::Mode::kConvertStrace: return ConvertStrace(*options);
  }
  return kExitUsage;
}
