// The lexical side of reading an strace log (strace_convert.cc): numbers,
// timestamps, a call's argument list and strace's quoted strings.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckptfs::replay {

// `s` without leading and trailing blanks.
std::string_view Trim(std::string_view s);
// A decimal or 0x-hex integer, all of `text` but the blanks around it.
bool ParseInt(std::string_view text, long long& out);
// "14:17:07.015547" or "1712345678.015547" (-ttt).
bool ParseTimestamp(std::string_view text, double& seconds);
// Splits "a, \"b,c\", [{x=1, y=2}], 3" at top-level commas; returns the index
// just past the closing parenthesis, or npos when the call is not closed.
size_t SplitArguments(std::string_view text, std::vector<std::string>& args);
// Unquotes a strace string argument ("/tmp/a\"b" -> /tmp/a"b), octal escapes included.
std::optional<std::string> Unquote(std::string_view arg);

}  // namespace ckptfs::replay
