// Command-line options of ckpt-replay: which mode runs, the workload with its
// overrides applied, and the run settings. Parsing returns Status::Invalid
// (NotFound for an unknown workload) with a message naming the option;
// main() maps that to exit code 2.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "burst_runner.h"
#include "ckptfs/status.h"
#include "workload_model.h"

namespace ckptfs::replay {

enum class Mode {
  kHelp,
  kListWorkloads,
  kPlan,              // --workload --plan: print files and sizes, no I/O
  kRunWorkload,       // --workload --dir: write (and restore) checkpoints
  kEmitWorkloadTrace, // --workload --emit-trace: the trace of a run, no I/O
  kReplayTrace,       // --trace --dir
  kConvertStrace,     // --from-strace --emit-trace
};

struct Options {
  Mode mode = Mode::kHelp;
  WorkloadSpec spec;
  BurstOptions burst;  // burst.ranks: the share of the ranks every workload mode runs
  bool json = false;       // --json given
  std::string json_path;   // "" or "-": stdout
  std::string emit_trace_path;
  std::string trace_path;
  std::string strace_path;
  std::string strace_root;
  bool timing = false;
  bool verify = false;
  bool quiet = false;
};

Result<Options> ParseOptions(std::span<const std::string_view> args);
std::string UsageText();

// "0.001", "1e-3" or "1/1000", in (0, 1].
Result<double> ParseScale(std::string_view text);

}  // namespace ckptfs::replay
