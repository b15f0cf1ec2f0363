// The tools' shared command-line conventions (tools/common): help and version
// are text to print, a bad value is named with its option, sizes take
// suffixes, a repeated option takes its last value; and every tool binary
// exits with its usage code, naming the option, when given a bad one.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/command_line.h"

namespace ckptfs::tools {
namespace {

Result<std::optional<std::string>> Parse(ToolApp& app, std::vector<std::string_view> args) {
  return ParseArgs(app, args);
}

std::string ErrorOf(ToolApp& app, std::vector<std::string_view> args) {
  Result<std::optional<std::string>> parsed = ParseArgs(app, args);
  EXPECT_FALSE(parsed.ok());
  return parsed.ok() ? std::string() : parsed.status().message();
}

TEST(CommandLine, SizesTakeBinarySuffixes) {
  ToolApp app("tool", "");
  uint64_t size = 0;
  app.add_option("--size", size)->transform(ByteSize());
  ASSERT_TRUE(Parse(app, {"--size", "64M"}).ok());
  EXPECT_EQ(size, 64ull << 20);
  ASSERT_TRUE(Parse(app, {"--size=4096"}).ok());
  EXPECT_EQ(size, 4096u);
  ASSERT_TRUE(Parse(app, {"--size", "1G"}).ok());
  EXPECT_EQ(size, 1ull << 30);
  EXPECT_EQ(ErrorOf(app, {"--size", "lots"}), "--size: not a size: lots");
}

TEST(CommandLine, NumbersOutOfRangeAreNamedWithTheirOption) {
  ToolApp app("tool", "");
  int count = 0;
  double wait = 0, interval = 0;
  app.add_option("--count", count)->check(IntegerAtLeast(1));
  app.add_option("--wait", wait)->check(Seconds(/*zero_ok=*/true));
  app.add_option("--interval", interval)->check(Seconds(/*zero_ok=*/false));
  EXPECT_EQ(ErrorOf(app, {"--count", "0"}), "--count: needs an integer >= 1, got '0'");
  EXPECT_EQ(ErrorOf(app, {"--count", "1.5"}), "--count: needs an integer >= 1, got '1.5'");
  EXPECT_EQ(ErrorOf(app, {"--wait", "-1"}), "--wait: needs seconds >= 0, got '-1'");
  EXPECT_EQ(ErrorOf(app, {"--interval", "0"}), "--interval: needs seconds > 0, got '0'");
  EXPECT_EQ(ErrorOf(app, {"--interval", "nan"}), "--interval: needs seconds > 0, got 'nan'");
  ASSERT_TRUE(Parse(app, {"--count", "3", "--wait", "0", "--interval", "0.5"}).ok());
  EXPECT_EQ(count, 3);
  EXPECT_EQ(wait, 0);
  EXPECT_EQ(interval, 0.5);
}

TEST(CommandLine, UnknownOptionsAndMissingValuesAreNamed) {
  ToolApp app("tool", "");
  std::string dir;
  app.add_option("--dir", dir)->type_name("DIR");
  EXPECT_EQ(ErrorOf(app, {"--bogus"}), "The following argument was not expected: --bogus");
  EXPECT_EQ(ErrorOf(app, {"--dir"}), "--dir: 1 required DIR missing");
}

TEST(CommandLine, ARepeatedOptionTakesItsLastValue) {
  ToolApp app("tool", "");
  int count = 0;
  app.add_option("--count", count);
  ASSERT_TRUE(Parse(app, {"--count", "2", "--count=5"}).ok());
  EXPECT_EQ(count, 5);
}

TEST(CommandLine, HelpAndVersionAreTextToPrint) {
  ToolApp app("tool", "Does one thing.");
  app.set_version_flag("-V,--version", "tool 1.0");
  app.Synopsis("usage: tool [--x] FILE\n");
  Result<std::optional<std::string>> help = Parse(app, {"--help"});
  ASSERT_TRUE(help.ok());
  ASSERT_TRUE(help->has_value());
  EXPECT_NE((*help)->find("Does one thing."), std::string::npos) << **help;
  EXPECT_NE((*help)->find("usage: tool [--x] FILE"), std::string::npos) << **help;
  Result<std::optional<std::string>> version = Parse(app, {"-V"});
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->value_or(""), "tool 1.0\n");
  Result<std::optional<std::string>> run = Parse(app, {});
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(run->has_value());
}

TEST(CommandLine, HelpIsWrappedAtEightyColumns) {
  std::string words;
  for (int i = 0; i < 40; ++i) words += "word" + std::to_string(i) + " ";
  ToolApp app("tool", words);
  bool flag = false;
  app.add_flag("--flag", flag, words);
  app.footer("  indented: " + words);
  std::istringstream help(app.help());
  std::string line;
  int lines = 0;
  while (std::getline(help, line)) {
    EXPECT_LE(line.size(), 80u) << line;
    ++lines;
  }
  EXPECT_GT(lines, 10);
}

struct Output {
  int code = -1;
  std::string text;  // stdout and stderr
};

Output RunTool(const std::string& command) {
  Output out;
  FILE* pipe = popen((std::string(CKPTFS_BIN_DIR) + "/" + command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.text.append(buf, n);
  int status = pclose(pipe);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

bool Built(const std::string& tool) { return access((std::string(CKPTFS_BIN_DIR) + "/" + tool).c_str(), X_OK) == 0; }

TEST(ToolCommandLines, BadOptionsExitWithTheUsageCodeAndNameTheOption) {
  struct Case {
    const char* tool;
    const char* args;
    int code;
    const char* named;
  };
  for (const Case& c : {Case{"mkfs.ckptfs", "--size lots /nonexistent/store", 2, "--size: not a size: lots"},
                        Case{"mkfs.ckptfs", "--no-such-flag /nonexistent/store", 2, "--no-such-flag"},
                        Case{"mkfs.ckptfs", "", 2, "PATH is required"},
                        Case{"ckptfs-fsck", "--wait soon /nonexistent/store", 16, "--wait: needs seconds >= 0"},
                        Case{"ckptfs-stat", "--interval 0 /", 2, "--interval: needs seconds > 0"},
                        Case{"ckptfs-compress-bench", "--repeat 0 --synthetic", 2, "--repeat: needs an integer >= 1"},
                        Case{"ckptfs-compress-bench", "--level 99 --synthetic", 2, "--level: compression level 99"},
                        Case{"ckptfs-compress-bench", "", 2, "no input"},
                        Case{"ckpt-replay", "--workload llama3-8b --plan --tp 0", 2, "--tp: needs an integer >= 1"},
                        Case{"ckpt-replay", "--workload llama3-405b --plan --ranks 6-8", 2,
                             "--ranks: 6-8 is outside the workload's ranks 0-7"},
                        Case{"ckpt-replay", "--workload llama3-405b --plan --node 2 --nodes 2", 2,
                             "--node: must be below --nodes 2"},
                        Case{"ckpt-replay", "--workload llama3-405b --emit-trace /dev/null --max-write 0", 2,
                             "--max-write: needs an integer >= 1"},
                        Case{"ckptfs-tier", "status rados:ckptfs/x --rados-timeout 0.5", 2, "--rados-timeout"},
                        Case{"ckptfs-tier", "status rados:ckptfs/x --rados-timeout 0", 2, "--rados-timeout"}}) {
    if (!Built(c.tool)) continue;  // ckpt-replay is optional
    SCOPED_TRACE(std::string(c.tool) + " " + c.args);
    Output out = RunTool(std::string(c.tool) + " " + c.args);
    EXPECT_EQ(out.code, c.code) << out.text;
    EXPECT_NE(out.text.find(c.named), std::string::npos) << out.text;
    EXPECT_NE(out.text.find(std::string("try '") + c.tool + " --help'"), std::string::npos) << out.text;
  }
}

TEST(ToolCommandLines, HelpExitsZeroAndListsTheOptions) {
  struct Case {
    const char* tool;
    const char* option;
  };
  for (const Case& c : {Case{"mkfs.ckptfs", "--segment-size SIZE"}, Case{"ckptfs-fsck", "--wait S"},
                        Case{"ckptfs-stat", "--interval SEC"}, Case{"ckptfs-compress-bench", "--level N[,N...]"},
                        Case{"ckpt-replay", "--restore-mode M"}}) {
    if (!Built(c.tool)) continue;
    SCOPED_TRACE(c.tool);
    Output out = RunTool(std::string(c.tool) + " --help");
    EXPECT_EQ(out.code, 0) << out.text;
    EXPECT_NE(out.text.find(c.option), std::string::npos) << out.text;
  }
}

}  // namespace
}  // namespace ckptfs::tools
