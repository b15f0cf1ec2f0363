// The parser is strict on purpose: a trace that silently loses an operation
// would replay a different workload, so every malformed line is an error.
#include "trace.h"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace ckptfs::replay {
namespace {

constexpr int kMaxRanks = 4096;
// A week: a time past it is a unit mistake, and with --timing a wait that
// would never end.
constexpr int kMaxTimeSeconds = 7 * 24 * 3600;

struct OpName {
  TraceOpKind kind;
  std::string_view name;
};
constexpr OpName kOpNames[] = {
    {TraceOpKind::kMkdir, "mkdir"},   {TraceOpKind::kCreate, "create"},
    {TraceOpKind::kOpenWrite, "openw"}, {TraceOpKind::kOpen, "open"},
    {TraceOpKind::kWrite, "write"},   {TraceOpKind::kRead, "read"},
    {TraceOpKind::kFsync, "fsync"},   {TraceOpKind::kClose, "close"},
    {TraceOpKind::kRename, "rename"}, {TraceOpKind::kUnlink, "unlink"},
};

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

template <typename T>
bool ParseNumber(std::string_view text, T& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

Status LineError(int line, const std::string& what) {
  return Status::Invalid("line " + std::to_string(line) + ": " + what);
}

bool IsEncodedByte(unsigned char c) { return c <= 0x20 || c == '%' || c >= 0x7F; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string FormatTime(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", seconds);
  return buf;
}

}  // namespace

std::string_view TraceOpName(TraceOpKind kind) {
  for (const OpName& op : kOpNames) {
    if (op.kind == kind) return op.name;
  }
  return "?";
}

int Trace::RankCount() const {
  int ranks = 0;
  for (const TraceOp& op : ops) ranks = std::max(ranks, op.rank + 1);
  return ranks;
}

std::vector<std::vector<const TraceOp*>> Trace::OpsByRank() const {
  std::vector<std::vector<const TraceOp*>> by_rank(RankCount());
  for (const TraceOp& op : ops) by_rank[op.rank].push_back(&op);
  return by_rank;
}

std::string EncodeTracePath(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : path) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (IsEncodedByte(c)) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

Result<std::string> DecodeTracePath(std::string_view encoded) {
  std::string out;
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] != '%') {
      out += encoded[i];
      continue;
    }
    if (i + 2 >= encoded.size()) {
      return Status::Invalid("truncated %-escape in path");
    }
    int hi = HexValue(encoded[i + 1]);
    int lo = HexValue(encoded[i + 2]);
    if (hi < 0 || lo < 0) return Status::Invalid("bad %-escape in path");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

Status CheckRelativePath(std::string_view path) {
  if (path.empty()) return Status::Invalid("empty path");
  if (path.front() == '/') return Status::Invalid("path must be relative: " + std::string(path));
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string_view part = path.substr(start, slash == std::string_view::npos ? path.npos : slash - start);
    if (part == "..") return Status::Invalid("path must not contain '..': " + std::string(path));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return Status::Ok();
}

Result<Trace> ParseTrace(std::string_view text) {
  Trace trace;
  std::vector<double> last_time;
  bool saw_header = false;
  int line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::vector<std::string_view> fields = SplitFields(line);
    if (fields.empty() || fields[0].front() == '#') continue;
    if (!saw_header) {
      if (fields.size() != 2 || fields[0] != "ckpt-trace") {
        return LineError(line_number, "expected header '" + std::string(kTraceHeader) + "'");
      }
      if (fields[1] != "v1") {
        return LineError(line_number, "unsupported trace version '" + std::string(fields[1]) +
                                          "' (this ckpt-replay reads v1)");
      }
      saw_header = true;
      continue;
    }
    if (fields.size() < 6 || fields.size() > 7) {
      return LineError(line_number, "expected 'rank time op path offset length [target]', got " +
                                        std::to_string(fields.size()) + " fields");
    }
    TraceOp op;
    op.line = line_number;
    if (!ParseNumber(fields[0], op.rank) || op.rank < 0 || op.rank >= kMaxRanks) {
      return LineError(line_number, "rank must be an integer in 0.." + std::to_string(kMaxRanks - 1) +
                                        ", got '" + std::string(fields[0]) + "'");
    }
    if (!ParseNumber(fields[1], op.time_s) || !(op.time_s >= 0) || !(op.time_s <= kMaxTimeSeconds)) {
      return LineError(line_number, "time must be seconds from 0 to " + std::to_string(kMaxTimeSeconds) +
                                        ", got '" + std::string(fields[1]) + "'");
    }
    bool known = false;
    for (const OpName& name : kOpNames) {
      if (fields[2] == name.name) {
        op.kind = name.kind;
        known = true;
      }
    }
    if (!known) return LineError(line_number, "unknown op '" + std::string(fields[2]) + "'");
    Result<std::string> path = DecodeTracePath(fields[3]);
    if (!path.ok()) return LineError(line_number, path.status().message());
    op.path = std::move(path).value();
    if (Status st = CheckRelativePath(op.path); !st.ok()) return LineError(line_number, st.message());
    if (!ParseNumber(fields[4], op.offset)) {
      return LineError(line_number, "offset must be an unsigned integer, got '" + std::string(fields[4]) + "'");
    }
    if (!ParseNumber(fields[5], op.length)) {
      return LineError(line_number, "length must be an unsigned integer, got '" + std::string(fields[5]) + "'");
    }
    if ((op.kind == TraceOpKind::kWrite || op.kind == TraceOpKind::kRead) && op.length > kMaxTraceIoBytes) {
      return LineError(line_number, "a " + std::string(fields[2]) + " of at most " + std::to_string(kMaxTraceIoBytes) +
                                        " bytes, got " + std::string(fields[5]));
    }
    if (op.offset > std::numeric_limits<uint64_t>::max() - op.length) {
      return LineError(line_number, "offset + length overflows 64 bits");
    }
    if (op.kind == TraceOpKind::kRename) {
      if (fields.size() != 7) return LineError(line_number, "rename needs a target path");
      Result<std::string> target = DecodeTracePath(fields[6]);
      if (!target.ok()) return LineError(line_number, target.status().message());
      op.target = std::move(target).value();
      if (Status st = CheckRelativePath(op.target); !st.ok()) return LineError(line_number, st.message());
    } else if (fields.size() == 7) {
      return LineError(line_number, "only rename takes a target path");
    }
    if (static_cast<size_t>(op.rank) >= last_time.size()) last_time.resize(op.rank + 1, 0);
    if (op.time_s < last_time[op.rank]) {
      return LineError(line_number, "time goes backwards for rank " + std::to_string(op.rank));
    }
    last_time[op.rank] = op.time_s;
    trace.ops.push_back(std::move(op));
  }
  if (!saw_header) return Status::Invalid("line 1: empty trace (no '" + std::string(kTraceHeader) + "' header)");
  return trace;
}

Result<Trace> ReadTraceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open trace " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  Result<Trace> trace = ParseTrace(buffer.str());
  if (!trace.ok()) return trace.status().WithContext(path);
  return trace;
}

std::string FormatTrace(const Trace& trace) {
  std::string out(kTraceHeader);
  out += "\n# rank time_s op path offset length [target]\n";
  for (const TraceOp& op : trace.ops) {
    out += std::to_string(op.rank);
    out += ' ';
    out += FormatTime(op.time_s);
    out += ' ';
    out += TraceOpName(op.kind);
    out += ' ';
    out += EncodeTracePath(op.path);
    out += ' ';
    out += std::to_string(op.offset);
    out += ' ';
    out += std::to_string(op.length);
    if (op.kind == TraceOpKind::kRename) {
      out += ' ';
      out += EncodeTracePath(op.target);
    }
    out += '\n';
  }
  return out;
}

Status WriteTraceFile(const std::string& path, const Trace& trace) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IOError("cannot create trace " + path);
  out << FormatTrace(trace);
  out.close();
  if (!out) return Status::IOError("writing trace " + path);
  return Status::Ok();
}

}  // namespace ckptfs::replay
