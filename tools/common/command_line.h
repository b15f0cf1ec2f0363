// The command-line conventions every ckptfs tool keeps, on top of CLI11:
// --help and --version print to stdout and exit 0; a bad option is named on
// stderr and exits with the tool's usage code; a repeated option takes its
// last value, as getopt's do; help is wrapped at 80 columns. Also the value
// checks more than one tool uses.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ckptfs/status.h"

namespace ckptfs::tools {

class HelpFormatter;

// A CLI11 App set up with the conventions above; add options after.
class ToolApp : public CLI::App {
 public:
  ToolApp(std::string name, std::string description);

  // Puts `lines` in the help where CLI11's one usage line would be: for a
  // tool whose modes take different options.
  void Synopsis(std::string lines);

 private:
  std::shared_ptr<HelpFormatter> help_;
};

// Parses `args` (what follows the program name) into `app`'s variables.
// Returns the text to print before exiting 0 when --help or --version was
// given, std::nullopt when the tool should go on, and Invalid with CLI11's
// message, which names the option, for bad input.
Result<std::optional<std::string>> ParseArgs(ToolApp& app, std::span<const std::string_view> args);

// ParseArgs for a main(): returns the code to exit with (0 after printing
// the help or version to stdout; `usage_exit` after printing "NAME: what is
// wrong" and where to look to stderr), or std::nullopt to go on.
std::optional<int> ParseCommandLine(ToolApp& app, int argc, const char* const* argv, int usage_exit);

// A byte count with K, M, G or T (binary) as util/size.h reads it; the
// option's variable receives the number of bytes. A transform(), not a check().
CLI::Validator ByteSize();

// A whole number no less than `min_value`.
CLI::Validator IntegerAtLeast(long long min_value);

// A number of seconds: more than zero, or with `zero_ok` at least zero.
CLI::Validator Seconds(bool zero_ok);

}  // namespace ckptfs::tools
