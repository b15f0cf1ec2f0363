// Option parsing: modes, overrides in any order, scale fractions and clear
// errors for bad input (main() turns these into exit code 2).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "options.h"

namespace ckptfs::replay {
namespace {

Result<Options> Parse(std::vector<std::string_view> args) { return ParseOptions(args); }

TEST(Options, RunModeWithOverridesBeforeOrAfterTheWorkload) {
  Result<Options> options = Parse({"--tp", "8", "--workload", "llama3-405b", "--dir", "/tmp/x", "--scale",
                                   "1/1000", "--checkpoints", "3", "--restore", "--json", "out.json", "--pp=4"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->mode, Mode::kRunWorkload);
  EXPECT_EQ(options->spec.layout.tensor, 8);
  EXPECT_EQ(options->spec.layout.pipeline, 4);
  EXPECT_DOUBLE_EQ(options->spec.scale, 0.001);
  EXPECT_EQ(options->burst.checkpoints, 3);
  EXPECT_TRUE(options->burst.restore);
  EXPECT_EQ(options->json_path, "out.json");
}

TEST(Options, PlanJsonWithoutFileMeansStdout) {
  Result<Options> options = Parse({"--workload", "llama3-8b", "--plan", "--json"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->mode, Mode::kPlan);
  EXPECT_TRUE(options->json);
  EXPECT_EQ(options->json_path, "");
}

TEST(Options, PresetIoDefaultsCanBeOverridden) {
  Result<Options> v2 = Parse({"--workload", "llama3-405b-dlio-v2.0", "--plan"});
  ASSERT_TRUE(v2.ok());
  EXPECT_FALSE(v2->spec.fsync);
  Result<Options> forced = Parse({"--workload", "llama3-405b-dlio-v2.0", "--plan", "--fsync", "on", "--payload", "random"});
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_TRUE(forced->spec.fsync);
  EXPECT_EQ(forced->spec.payload, PayloadKind::kRandom);
  Result<Options> no_fsync = Parse({"--workload", "llama3-405b", "--plan", "--no-fsync"});
  EXPECT_FALSE(no_fsync->spec.fsync);
}

TEST(Options, UsageErrorsSayWhatIsWrong) {
  auto error = [](std::vector<std::string_view> args) {
    Result<Options> options = ParseOptions(args);
    EXPECT_FALSE(options.ok());
    return options.ok() ? std::string() : options.status().message();
  };
  EXPECT_EQ(error({}), "nothing to do: give --workload, --trace or --from-strace");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--bogus"}), "The following argument was not expected: --bogus");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--dir"}), "--dir: 1 required DIR missing");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--dir", "d", "--scale", "2"}), "--scale: must be in (0, 1], got '2'");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--dir", "d", "--scale", "1/0"}),
            "--scale: fraction must be N/D with D != 0, got '1/0'");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--dir", "d", "--checkpoints", "0"}),
            "--checkpoints: needs an integer >= 1, got '0'");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--plan", "--tp", "-2"}), "--tp: needs an integer >= 1, got '-2'");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--plan", "--model-dtype", "fp8"}),
            "--model-dtype: unknown dtype 'fp8' (int8, fp16, bf16, fp32, fp64)");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--plan", "--fsync", "maybe"}), "--fsync: takes on|off, got 'maybe'");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--dir", "d", "--max-write", "lots"}),
            "--max-write: not a size: lots");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--heads", "100", "--plan"}), "attention heads must divide hidden");
  EXPECT_EQ(error({"--workload", "llama3-405b"}), "--workload needs --plan, --dir DIR or --emit-trace FILE");
  EXPECT_EQ(error({"--trace", "t"}), "--trace needs --dir DIR");
  EXPECT_EQ(error({"--from-strace", "s"}), "--from-strace needs --emit-trace FILE");
  EXPECT_EQ(error({"--trace", "t", "--workload", "llama3-8b"}), "--workload, --trace and --from-strace exclude each other");
  EXPECT_EQ(error({"--workload", "llama3-8b", "--plan", "--no-fsync", "--fsync", "on"}),
            "--no-fsync and --fsync on exclude each other");
  EXPECT_EQ(error({"--workload", "llama3-8b", "--plan", "--strace-root", "/x"}), "--strace-root applies to --from-strace");
}

TEST(Options, ATraceReplayOrAnStraceConversionRefusesAWorkloadsOptions) {
  auto error = [](std::vector<std::string_view> args) {
    Result<Options> options = ParseOptions(args);
    EXPECT_FALSE(options.ok());
    return options.ok() ? std::string() : options.status().message();
  };
  // A trace holds its own files, sizes and fsyncs: these would be ignored.
  EXPECT_EQ(error({"--trace", "t", "--dir", "d", "--tp", "8"}), "--tp does not apply to --trace");
  EXPECT_EQ(error({"--trace", "t", "--dir", "d", "--checkpoints", "2"}), "--checkpoints does not apply to --trace");
  EXPECT_EQ(error({"--trace", "t", "--dir", "d", "--no-fsync"}), "--no-fsync does not apply to --trace");
  EXPECT_EQ(error({"--trace", "t", "--dir", "d", "--emit-trace", "u"}), "--emit-trace does not apply to --trace");
  EXPECT_EQ(error({"--from-strace", "s", "--emit-trace", "t", "--dir", "d"}), "--dir does not apply to --from-strace");
  EXPECT_EQ(error({"--from-strace", "s", "--emit-trace", "t", "--verify"}),
            "--verify does not apply to --from-strace");
  // What each does use.
  Result<Options> replay =
      Parse({"--trace", "t", "--dir", "d", "--timing", "--verify", "--payload", "zeros", "--json", "--quiet"});
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_EQ(replay->mode, Mode::kReplayTrace);
  EXPECT_EQ(replay->spec.payload, PayloadKind::kZeros);
  Result<Options> convert = Parse({"--from-strace", "s", "--emit-trace", "t", "--strace-root", "/r"});
  ASSERT_TRUE(convert.ok()) << convert.status().ToString();
  EXPECT_EQ(convert->mode, Mode::kConvertStrace);
}

TEST(Options, RestoreModeAndRestoreOnly) {
  Result<Options> plain = Parse({"--workload", "llama3-405b", "--dir", "d", "--restore"});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->burst.restore_mode, RestoreMode::kRead);
  EXPECT_FALSE(plain->burst.restore_only);
  Result<Options> mapped = Parse({"--workload", "small-files", "--dir", "d", "--restore-only", "--restore-mode=mmap"});
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(mapped->mode, Mode::kRunWorkload);
  EXPECT_EQ(mapped->burst.restore_mode, RestoreMode::kMmap);
  EXPECT_TRUE(mapped->burst.restore_only);
  EXPECT_TRUE(mapped->burst.restore);
  auto error = [](std::vector<std::string_view> args) {
    Result<Options> options = ParseOptions(args);
    return options.ok() ? std::string() : options.status().message();
  };
  EXPECT_EQ(error({"--workload", "llama3-405b", "--dir", "d", "--restore", "--restore-mode", "splice"}),
            "--restore-mode: takes read|mmap, got 'splice'");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--emit-trace", "t", "--restore-only"}),
            "--restore-only needs --dir DIR");
  EXPECT_EQ(error({"--workload", "llama3-405b", "--dir", "d", "--restore-only", "--keep", "2"}),
            "--restore-only cannot apply --keep");
}

TEST(Options, SmallFilesScaleMeansFileCount) {
  Result<Options> options = Parse({"--workload", "small-files", "--dir", "d", "--scale", "0.01", "--dp", "16"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->spec.rule, SizingRule::kSmallFiles);
  EXPECT_EQ(options->spec.layout.WorldSize(), 16);
  EXPECT_DOUBLE_EQ(options->spec.scale, 0.01);
}

TEST(Options, ByteSizesTakeBinarySuffixes) {
  Result<Options> options = Parse({"--workload", "llama3-8b", "--dir", "d", "--max-write", "64M", "--appender-rate=4096"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->burst.max_write, 64ull << 20);
  EXPECT_EQ(options->burst.appender_bytes_per_s, 4096u);
}

TEST(Options, ARepeatedOptionTakesItsLastValue) {
  Result<Options> options = Parse({"--workload", "llama3-8b", "--plan", "--tp", "2", "--tp", "4"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->spec.layout.tensor, 4);
}

TEST(Options, RanksOrNodeChooseAShareOfTheRanksInEveryWorkloadMode) {
  auto ranks = [](std::vector<std::string_view> args) {
    Result<Options> options = ParseOptions(args);
    EXPECT_TRUE(options.ok()) << options.status().ToString();
    return options.ok() ? options->burst.ranks : std::nullopt;
  };
  EXPECT_EQ(ranks({"--workload", "llama3-405b", "--dir", "d"}), std::nullopt);
  EXPECT_EQ(ranks({"--workload", "llama3-405b", "--dir", "d", "--ranks", "4-7"}), (RankRange{4, 7}));
  EXPECT_EQ(ranks({"--workload", "llama3-405b", "--dir", "d", "--ranks=5"}), (RankRange{5, 5}));
  EXPECT_EQ(ranks({"--workload", "llama3-405b", "--dir", "d", "--ranks", "0-7"}), (RankRange{0, 7}));
  EXPECT_EQ(ranks({"--workload", "llama3-405b", "--plan", "--node", "1", "--nodes", "3"}), (RankRange{3, 5}));
  EXPECT_EQ(ranks({"--workload", "llama3-405b", "--dir", "d", "--restore-only", "--nodes", "2", "--node", "1"}),
            (RankRange{4, 7}));
  EXPECT_EQ(ranks({"--workload", "llama3-405b", "--emit-trace", "t", "--node", "0", "--nodes", "8"}), (RankRange{0, 0}));
  // Checked against the layout after overrides, wherever they stand.
  EXPECT_EQ(ranks({"--ranks", "8-15", "--workload", "llama3-405b", "--plan", "--tp", "8"}), (RankRange{8, 15}));
  EXPECT_EQ(ranks({"--workload", "small-files", "--dir", "d", "--node", "3", "--nodes", "4", "--dp", "16"}),
            (RankRange{12, 15}));
}

TEST(Options, BadRanksOrNodesAreUsageErrorsNamingTheOption) {
  auto error = [](std::vector<std::string_view> args) {
    Result<Options> options = ParseOptions(args);
    EXPECT_FALSE(options.ok());
    return options.ok() ? std::string() : options.status().message();
  };
  const std::string_view w = "--workload", name = "llama3-405b", plan = "--plan";
  EXPECT_EQ(error({w, name, plan, "--ranks", "8"}), "--ranks: 8 is outside the workload's ranks 0-7");
  EXPECT_EQ(error({w, name, plan, "--ranks", "6-8"}), "--ranks: 6-8 is outside the workload's ranks 0-7");
  EXPECT_EQ(error({w, name, plan, "--ranks", "5-3"}), "--ranks: the first rank must not exceed the last, got '5-3'");
  EXPECT_EQ(error({w, name, plan, "--ranks", "0-3,5"}),
            "--ranks: needs A-B or A (0-based ranks, inclusive), got '0-3,5'");
  EXPECT_EQ(error({w, name, plan, "--ranks", "-1"}), "--ranks: needs A-B or A (0-based ranks, inclusive), got '-1'");
  EXPECT_EQ(error({w, name, plan, "--ranks"}), "--ranks: 1 required A-B missing");
  EXPECT_EQ(error({w, name, plan, "--node", "1"}), "--node needs --nodes N");
  EXPECT_EQ(error({w, name, plan, "--nodes", "2"}), "--nodes needs --node I");
  EXPECT_EQ(error({w, name, plan, "--node", "2", "--nodes", "2"}),
            "--node: must be below --nodes 2 (nodes count from 0), got 2");
  EXPECT_EQ(error({w, name, plan, "--node", "0", "--nodes", "9"}),
            "--nodes: 9 nodes for the workload's 8 ranks; each node needs a rank");
  EXPECT_EQ(error({w, name, plan, "--node", "-1", "--nodes", "2"}), "--node: needs an integer >= 0, got '-1'");
  EXPECT_EQ(error({w, name, plan, "--node", "0", "--nodes", "0"}), "--nodes: needs an integer >= 1, got '0'");
  EXPECT_EQ(error({w, name, plan, "--ranks", "0-3", "--node", "0", "--nodes", "2"}),
            "--ranks and --node/--nodes exclude each other");
  EXPECT_EQ(error({"--trace", "t", "--dir", "d", "--ranks", "0-3"}), "--ranks, --node and --nodes apply to --workload");
  EXPECT_EQ(error({"--from-strace", "s", "--emit-trace", "t", "--node", "0", "--nodes", "2"}),
            "--ranks, --node and --nodes apply to --workload");
}

TEST(Options, HelpNamesEveryGroupAndWorkload) {
  Result<Options> options = Parse({"--workload", "llama3-8b", "--help"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->mode, Mode::kHelp);
  std::string help = UsageText();
  for (const char* text : {"ckpt-replay --trace FILE --dir DIR", "run options:", "--restore-mode M",
                           "model/layout options (override the preset):", "--kv-heads N", "trace options:",
                           "--strace-root DIR", "llama3-405b", "exit status:", "multi-node options",
                           "--ranks A-B", "--node I", "--nodes N", "0-2, 3-5, 6-7"}) {
    EXPECT_NE(help.find(text), std::string::npos) << text << " not in:\n" << help;
  }
}

}  // namespace
}  // namespace ckptfs::replay
