// CLI11 reports bad input and requests for help by exceptions; they stop
// here and leave as a Status or an exit code.
#include "common/command_line.h"

#include <charconv>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "util/size.h"

namespace ckptfs::tools {

namespace {

constexpr size_t kHelpWidth = 80;

// Breaks each line of `text` that is longer than `width` at spaces; the
// pieces keep the line's indent. A single longer word stays whole.
std::string Wrap(std::string_view text, size_t width) {
  std::string out;
  for (size_t start = 0; start <= text.size();) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string line(text.substr(start, end - start));
    const std::string indent(std::min(line.find_first_not_of(' '), line.size()), ' ');
    while (line.size() > width) {
      size_t cut = line.rfind(' ', width);
      if (cut == std::string::npos || cut <= indent.size()) break;
      out += line.substr(0, cut) + '\n';
      line = indent + line.substr(cut + 1);
    }
    out += line;
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace

// CLI11 2.1 prints each description on one line, however long.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_description(const CLI::App* app) const override {
    return Wrap(CLI::Formatter::make_description(app), kHelpWidth);
  }
  std::string make_usage(const CLI::App* app, std::string name) const override {
    return synopsis_.empty() ? CLI::Formatter::make_usage(app, name) : synopsis_;
  }
  std::string make_option_desc(const CLI::Option* option) const override {
    return Wrap(CLI::Formatter::make_option_desc(option), kHelpWidth - get_column_width());
  }
  std::string make_footer(const CLI::App* app) const override {
    return Wrap(CLI::Formatter::make_footer(app), kHelpWidth);
  }

  std::string synopsis_;
};

ToolApp::ToolApp(std::string name, std::string description)
    : CLI::App(std::move(description), std::move(name)), help_(std::make_shared<HelpFormatter>()) {
  option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  formatter(help_);
}

void ToolApp::Synopsis(std::string lines) { help_->synopsis_ = std::move(lines); }

Result<std::optional<std::string>> ParseArgs(ToolApp& app, std::span<const std::string_view> args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // as App::parse wants them
  try {
    app.parse(reversed);
  } catch (const CLI::CallForVersion& e) {
    return std::optional<std::string>(std::string(e.what()) + "\n");
  } catch (const CLI::Success&) {  // --help
    return std::optional<std::string>(app.help());
  } catch (const CLI::ParseError& e) {
    return Status::Invalid(e.what());
  }
  return std::optional<std::string>();
}

std::optional<int> ParseCommandLine(ToolApp& app, int argc, const char* const* argv, int usage_exit) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  Result<std::optional<std::string>> parsed = ParseArgs(app, args);
  if (!parsed.ok()) {
    const std::string& name = app.get_name();
    std::fprintf(stderr, "%s: %s\ntry '%s --help'\n", name.c_str(), parsed.status().message().c_str(),
                 name.c_str());
    return usage_exit;
  }
  if (!parsed->has_value()) return std::nullopt;
  std::fputs((*parsed)->c_str(), stdout);
  return 0;
}

CLI::Validator ByteSize() {
  return CLI::Validator(
      [](std::string& text) {
        Result<uint64_t> bytes = ParseSize(text);
        if (!bytes.ok()) return bytes.status().message();
        text = std::to_string(*bytes);
        return std::string();
      },
      "");
}

CLI::Validator IntegerAtLeast(long long min_value) {
  return CLI::Validator(
      [min_value](std::string& text) {
        long long value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc() && end == text.data() + text.size() && value >= min_value) return std::string();
        return "needs an integer >= " + std::to_string(min_value) + ", got '" + text + "'";
      },
      "");
}

CLI::Validator Seconds(bool zero_ok) {
  return CLI::Validator(
      [zero_ok](std::string& text) {
        double value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        bool number = ec == std::errc() && end == text.data() + text.size() && std::isfinite(value);
        if (number && (value > 0 || (zero_ok && value == 0))) return std::string();
        return std::string(zero_ok ? "needs seconds >= 0" : "needs seconds > 0") + ", got '" + text + "'";
      },
      "");
}

}  // namespace ckptfs::tools
