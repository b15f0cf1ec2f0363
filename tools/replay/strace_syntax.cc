// strace_syntax: see strace_syntax.h.
#include "strace_syntax.h"

#include <cctype>
#include <charconv>

namespace ckptfs::replay {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool ParseInt(std::string_view text, long long& out) {
  text = Trim(text);
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool ParseTimestamp(std::string_view text, double& seconds) {
  size_t first_colon = text.find(':');
  if (first_colon == std::string_view::npos) {
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    return ec == std::errc() && ptr == text.data() + text.size();
  }
  int h = 0, m = 0;
  double s = 0;
  size_t second_colon = text.find(':', first_colon + 1);
  if (second_colon == std::string_view::npos) return false;
  auto parse_int = [](std::string_view t, int& v) {
    auto [p, e] = std::from_chars(t.data(), t.data() + t.size(), v);
    return e == std::errc() && p == t.data() + t.size();
  };
  std::string_view sec = text.substr(second_colon + 1);
  auto [ptr, ec] = std::from_chars(sec.data(), sec.data() + sec.size(), s);
  if (ec != std::errc() || ptr != sec.data() + sec.size()) return false;
  if (!parse_int(text.substr(0, first_colon), h) ||
      !parse_int(text.substr(first_colon + 1, second_colon - first_colon - 1), m)) {
    return false;
  }
  seconds = h * 3600.0 + m * 60.0 + s;
  return true;
}

size_t SplitArguments(std::string_view text, std::vector<std::string>& args) {
  int depth = 0;
  bool in_string = false;
  std::string current;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      current += c;
      if (c == '\\' && i + 1 < text.size()) {
        current += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; current += c; break;
      case '(': case '[': case '{': ++depth; current += c; break;
      case ']': case '}': --depth; current += c; break;
      case ')':
        if (depth == 0) {
          if (!Trim(current).empty() || !args.empty()) args.emplace_back(Trim(current));
          return i + 1;
        }
        --depth;
        current += c;
        break;
      case ',':
        if (depth == 0) {
          args.emplace_back(Trim(current));
          current.clear();
        } else {
          current += c;
        }
        break;
      default: current += c;
    }
  }
  return std::string_view::npos;
}

std::optional<std::string> Unquote(std::string_view arg) {
  arg = Trim(arg);
  if (arg.size() < 2 || arg.front() != '"') return std::nullopt;
  std::string out;
  size_t i = 1;
  for (; i < arg.size(); ++i) {
    char c = arg[i];
    if (c == '"') break;
    if (c != '\\' || i + 1 >= arg.size()) {
      out += c;
      continue;
    }
    char e = arg[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'v': out += '\v'; break;
      case 'f': out += '\f'; break;
      case 'x': {
        int v = 0, n = 0;
        while (n < 2 && i + 1 < arg.size() && std::isxdigit(static_cast<unsigned char>(arg[i + 1]))) {
          char h = arg[++i];
          v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
          ++n;
        }
        out += static_cast<char>(v);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0', n = 1;
          while (n < 3 && i + 1 < arg.size() && arg[i + 1] >= '0' && arg[i + 1] <= '7') {
            v = v * 8 + (arg[++i] - '0');
            ++n;
          }
          out += static_cast<char>(v);
        } else {
          out += e;
        }
    }
  }
  if (i >= arg.size()) return std::nullopt;
  return out;
}

}  // namespace ckptfs::replay
