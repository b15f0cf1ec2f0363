// Two stages: lines become SyscallRecords (stitching "<unfinished ...>" and
// "<... resumed>" halves back together), then records drive a descriptor
// table that knows each fd's path and position, which is what turns write()
// into "write PATH OFFSET LENGTH". Descriptors a pid did not open are looked
// up among all pids, because threads share one table and strace shows tids.
#include "strace_convert.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "strace_syntax.h"

namespace ckptfs::replay {
namespace {

struct SyscallRecord {
  int pid = 0;
  double time_s = 0;
  std::string name;
  std::vector<std::string> args;
  long long ret = -1;
  std::string error;  // "EEXIST" and the like when ret < 0
  int line = 0;
};

Status LineError(int line, const std::string& what) {
  return Status::Invalid("line " + std::to_string(line) + ": " + what);
}

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The syscalls whose arguments we need; others are counted and skipped.
bool IsTracked(std::string_view name) {
  static constexpr std::string_view kTracked[] = {
      "open", "openat", "creat", "write", "writev", "pwrite64", "pwritev", "pwritev2",
      "read", "readv", "pread64", "preadv", "preadv2", "lseek", "fsync", "fdatasync",
      "close", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "unlink", "unlinkat",
      "dup", "dup2", "dup3"};
  return std::find(std::begin(kTracked), std::end(kTracked), name) != std::end(kTracked);
}

class RecordParser {
 public:
  // Returns a record, nullopt for lines that carry none, or an error.
  Result<std::optional<SyscallRecord>> Parse(std::string_view line, int line_number) {
    using Maybe = std::optional<SyscallRecord>;
    line = Trim(line);
    if (line.empty() || line.starts_with("strace:")) return Maybe();
    int pid = 0;
    if (line.starts_with("[pid")) {
      size_t close = line.find(']');
      long long value = 0;
      if (close == std::string_view::npos || !ParseInt(line.substr(4, close - 4), value)) {
        return LineError(line_number, "malformed [pid N] prefix");
      }
      pid = static_cast<int>(value);
      line = Trim(line.substr(close + 1));
    } else if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
      size_t space = line.find_first_of(" \t");
      std::string_view first = line.substr(0, space);
      long long value = 0;
      // A leading integer followed by a timestamp is strace -f's pid column.
      if (space != std::string_view::npos && first.find(':') == std::string_view::npos &&
          first.find('.') == std::string_view::npos && ParseInt(first, value)) {
        pid = static_cast<int>(value);
        line = Trim(line.substr(space));
      }
    }
    size_t space = line.find_first_of(" \t");
    if (space == std::string_view::npos) return LineError(line_number, "not an strace -tt line");
    double time_s = 0;
    if (!ParseTimestamp(line.substr(0, space), time_s)) {
      return LineError(line_number, "expected a timestamp (strace -tt), got '" +
                                        std::string(line.substr(0, space)) + "'");
    }
    time_s = Unwrap(time_s);
    std::string_view body = Trim(line.substr(space));
    if (body.starts_with("+++") || body.starts_with("---")) return Maybe();

    std::string call;
    double call_time = time_s;
    if (body.starts_with("<...")) {
      auto it = unfinished_.find(pid);
      if (it == unfinished_.end()) {  // began before a trimmed log starts, or before attach
        ++ignored_;
        return Maybe();
      }
      size_t resumed = body.find("resumed>");
      if (resumed == std::string_view::npos) return LineError(line_number, "malformed resumed call");
      call = it->second.text + std::string(body.substr(resumed + 8));
      call_time = it->second.time_s;
      unfinished_.erase(it);
    } else {
      size_t mark = body.find("<unfinished ...>");
      if (mark != std::string_view::npos) {
        unfinished_[pid] = {std::string(Trim(body.substr(0, mark))), time_s};
        return Maybe();
      }
      call = std::string(body);
    }

    size_t name_end = 0;
    while (name_end < call.size() && IsNameChar(call[name_end])) ++name_end;
    if (name_end == 0 || name_end >= call.size() || call[name_end] != '(') {
      return LineError(line_number, "expected 'syscall(args) = result'");
    }
    SyscallRecord record;
    record.pid = pid;
    record.time_s = call_time;
    record.name = call.substr(0, name_end);
    record.line = line_number;
    if (!IsTracked(record.name)) {
      ++ignored_;
      return Maybe();
    }
    std::string_view rest(call);
    rest.remove_prefix(name_end + 1);
    size_t after = SplitArguments(rest, record.args);
    if (after == std::string_view::npos) return LineError(line_number, "unterminated argument list");
    std::string_view result = Trim(rest.substr(after));
    if (!result.starts_with("=")) return LineError(line_number, "missing ' = result'");
    result = Trim(result.substr(1));
    std::string_view value = result.substr(0, result.find_first_of(" \t"));
    if (value == "?") return Maybe();  // the process died mid-call
    if (!ParseInt(value, record.ret)) {
      return LineError(line_number, "unparsable result '" + std::string(value) + "'");
    }
    if (record.ret < 0) {
      std::string_view error = Trim(result.substr(value.size()));
      record.error = std::string(error.substr(0, error.find_first_of(" \t")));
    }
    return Maybe(std::move(record));
  }

  size_t ignored() const { return ignored_; }

 private:
  struct Pending {
    std::string text;
    double time_s;
  };

  // -tt timestamps restart at midnight; keep time moving forward.
  double Unwrap(double t) {
    if (t + day_offset_ < last_time_ - 43200) day_offset_ += 86400;
    last_time_ = t + day_offset_;
    return last_time_;
  }

  std::map<int, Pending> unfinished_;
  size_t ignored_ = 0;
  double day_offset_ = 0;
  double last_time_ = 0;
};

// An operation before root filtering: absolute (or program-relative) paths.
struct RawOp {
  int pid;
  double time_s;
  TraceOpKind kind;
  std::string path;
  uint64_t offset;
  uint64_t length;
  std::string target;
};

struct OpenFileState {
  std::string path;
  bool is_directory = false;
  uint64_t position = 0;
};

class DescriptorTracker {
 public:
  Status Apply(const SyscallRecord& r, std::vector<RawOp>& out, size_t& ignored) {
    // Failed calls change nothing a replay should repeat, except a mkdir that
    // found the directory there: keeping it lets that rank's replay create the
    // directory itself instead of racing the rank that made it first.
    bool existing_directory = (r.name == "mkdir" || r.name == "mkdirat") && r.error == "EEXIST";
    if (r.ret < 0 && !existing_directory) {
      ++ignored;
      return Status::Ok();
    }
    auto need_args = [&](size_t n) -> Status {
      if (r.args.size() < n) return LineError(r.line, r.name + " needs " + std::to_string(n) + " arguments");
      return Status::Ok();
    };
    auto emit = [&](TraceOpKind kind, std::string path, uint64_t offset, uint64_t length,
                    std::string target = "") {
      // A write or read over a trace's limit goes as pieces of it, in order.
      const bool io = kind == TraceOpKind::kWrite || kind == TraceOpKind::kRead;
      for (; io && length > kMaxTraceIoBytes; offset += kMaxTraceIoBytes, length -= kMaxTraceIoBytes) {
        out.push_back({r.pid, r.time_s, kind, path, offset, kMaxTraceIoBytes, ""});
      }
      out.push_back({r.pid, r.time_s, kind, std::move(path), offset, length, std::move(target)});
    };
    const std::string& n = r.name;
    if (n == "open" || n == "openat" || n == "creat") {
      size_t path_arg = n == "openat" ? 1 : 0;
      CKPTFS_RETURN_IF_ERROR(need_args(path_arg + 1));
      CKPTFS_ASSIGN_OR_RETURN(std::string path, PathArg(r, path_arg, n == "openat" ? 0 : -1));
      std::string flags = n == "creat" ? "O_WRONLY|O_CREAT|O_TRUNC"
                                       : (r.args.size() > path_arg + 1 ? r.args[path_arg + 1] : "O_RDONLY");
      OpenFileState state{path, flags.find("O_DIRECTORY") != std::string::npos, 0};
      fds_[{r.pid, static_cast<int>(r.ret)}] = state;
      if (state.is_directory) return Status::Ok();
      bool writes = flags.find("O_WRONLY") != std::string::npos || flags.find("O_RDWR") != std::string::npos;
      if (writes && flags.find("O_TRUNC") != std::string::npos) {
        emit(TraceOpKind::kCreate, path, 0, 0);
      } else if (writes || flags.find("O_CREAT") != std::string::npos) {
        emit(TraceOpKind::kOpenWrite, path, 0, 0);
      } else {
        emit(TraceOpKind::kOpen, path, 0, 0);
      }
      return Status::Ok();
    }
    if (n == "write" || n == "writev" || n == "read" || n == "readv") {
      CKPTFS_RETURN_IF_ERROR(need_args(1));
      OpenFileState* file = Find(r.pid, r.args[0]);
      if (file == nullptr || file->is_directory) return Ignore(ignored);
      if (r.ret > 0) {
        bool is_write = n[0] == 'w';
        emit(is_write ? TraceOpKind::kWrite : TraceOpKind::kRead, file->path, file->position, r.ret);
      }
      file->position += r.ret;
      return Status::Ok();
    }
    if (n == "pwrite64" || n == "pwritev" || n == "pwritev2" || n == "pread64" || n == "preadv" ||
        n == "preadv2") {
      CKPTFS_RETURN_IF_ERROR(need_args(4));
      OpenFileState* file = Find(r.pid, r.args[0]);
      if (file == nullptr || file->is_directory) return Ignore(ignored);
      long long offset = 0;
      if (!ParseInt(r.args[3], offset) || offset < 0) return LineError(r.line, "bad offset in " + n);
      if (r.ret > 0) {
        bool is_write = n[1] == 'w';
        emit(is_write ? TraceOpKind::kWrite : TraceOpKind::kRead, file->path, offset, r.ret);
      }
      return Status::Ok();
    }
    if (n == "lseek") {
      CKPTFS_RETURN_IF_ERROR(need_args(1));
      OpenFileState* file = Find(r.pid, r.args[0]);
      if (file == nullptr) return Ignore(ignored);
      file->position = r.ret;
      return Status::Ok();
    }
    if (n == "fsync" || n == "fdatasync" || n == "close") {
      CKPTFS_RETURN_IF_ERROR(need_args(1));
      OpenFileState* file = Find(r.pid, r.args[0]);
      if (file == nullptr) return Ignore(ignored);
      if (!file->is_directory) emit(n == "close" ? TraceOpKind::kClose : TraceOpKind::kFsync, file->path, 0, 0);
      if (n == "close") Erase(r.pid, r.args[0]);
      return Status::Ok();
    }
    if (n == "dup" || n == "dup2" || n == "dup3") {
      CKPTFS_RETURN_IF_ERROR(need_args(1));
      OpenFileState* file = Find(r.pid, r.args[0]);
      if (file == nullptr) return Ignore(ignored);
      fds_[{r.pid, static_cast<int>(r.ret)}] = *file;
      return Status::Ok();
    }
    if (n == "rename" || n == "renameat" || n == "renameat2") {
      bool at = n != "rename";
      CKPTFS_RETURN_IF_ERROR(need_args(at ? 4 : 2));
      CKPTFS_ASSIGN_OR_RETURN(std::string from, PathArg(r, at ? 1 : 0, at ? 0 : -1));
      CKPTFS_ASSIGN_OR_RETURN(std::string to, PathArg(r, at ? 3 : 1, at ? 2 : -1));
      emit(TraceOpKind::kRename, from, 0, 0, to);
      return Status::Ok();
    }
    if (n == "mkdir" || n == "mkdirat") {
      bool at = n == "mkdirat";
      CKPTFS_RETURN_IF_ERROR(need_args(at ? 2 : 1));
      CKPTFS_ASSIGN_OR_RETURN(std::string path, PathArg(r, at ? 1 : 0, at ? 0 : -1));
      emit(TraceOpKind::kMkdir, path, 0, 0);
      return Status::Ok();
    }
    if (n == "unlink" || n == "unlinkat") {
      bool at = n == "unlinkat";
      CKPTFS_RETURN_IF_ERROR(need_args(at ? 2 : 1));
      if (at && r.args.size() > 2 && r.args[2].find("AT_REMOVEDIR") != std::string::npos) {
        return Ignore(ignored);
      }
      CKPTFS_ASSIGN_OR_RETURN(std::string path, PathArg(r, at ? 1 : 0, at ? 0 : -1));
      emit(TraceOpKind::kUnlink, path, 0, 0);
      return Status::Ok();
    }
    return Ignore(ignored);
  }

 private:
  using Key = std::pair<int, int>;

  static Status Ignore(size_t& ignored) {
    ++ignored;
    return Status::Ok();
  }

  std::optional<Key> Lookup(int pid, const std::string& fd_arg) {
    long long fd = 0;
    if (!ParseInt(fd_arg.substr(0, fd_arg.find('<')), fd)) return std::nullopt;
    Key own{pid, static_cast<int>(fd)};
    if (fds_.count(own)) return own;
    for (const auto& [key, state] : fds_) {  // shared table: threads and forked children
      if (key.second == fd) return key;
    }
    return std::nullopt;
  }

  OpenFileState* Find(int pid, const std::string& fd_arg) {
    std::optional<Key> key = Lookup(pid, fd_arg);
    return key ? &fds_[*key] : nullptr;
  }

  void Erase(int pid, const std::string& fd_arg) {
    if (std::optional<Key> key = Lookup(pid, fd_arg)) fds_.erase(*key);
  }

  // Resolves argument `path_arg` against the directory fd in `dirfd_arg`
  // (-1: none). AT_FDCWD-relative paths stay relative: strace does not say
  // what the working directory was.
  Result<std::string> PathArg(const SyscallRecord& r, size_t path_arg, int dirfd_arg) {
    std::optional<std::string> path = Unquote(r.args[path_arg]);
    if (!path) return LineError(r.line, "expected a quoted path in " + r.name);
    if (path->empty() || path->front() == '/' || dirfd_arg < 0) return *path;
    const std::string& dirfd = r.args[dirfd_arg];
    if (dirfd.starts_with("AT_FDCWD")) return *path;
    OpenFileState* dir = Find(r.pid, dirfd);
    if (dir == nullptr) return *path;
    return dir->path + "/" + *path;
  }

  std::map<Key, OpenFileState> fds_;
};

std::vector<std::string_view> Components(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string_view part = path.substr(start, slash == std::string_view::npos ? path.npos : slash - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

std::string Normalize(std::string_view path) {
  std::string out = path.starts_with("/") ? "/" : "";
  for (std::string_view part : Components(path)) {
    if (out.size() > 1 || (out.size() == 1 && out != "/")) out += '/';
    out += part;
  }
  return out;
}

bool IsSystemPath(std::string_view path) {
  for (std::string_view prefix : {"/dev/", "/proc/", "/sys/", "/usr/", "/etc/", "/lib"}) {
    if (path.starts_with(prefix)) return true;
  }
  return false;
}

// Deepest directory containing every written file.
std::string AutoRoot(const std::vector<RawOp>& ops) {
  std::optional<std::vector<std::string_view>> common;
  bool absolute = false;
  std::vector<std::string> dirs;
  for (const RawOp& op : ops) {
    bool writes = op.kind == TraceOpKind::kCreate || op.kind == TraceOpKind::kOpenWrite ||
                  op.kind == TraceOpKind::kWrite;
    const std::string& path = op.kind == TraceOpKind::kRename ? op.target : op.path;
    if ((!writes && op.kind != TraceOpKind::kRename) || IsSystemPath(path)) continue;
    size_t slash = path.rfind('/');
    dirs.push_back(slash == std::string::npos ? "" : path.substr(0, slash));
    absolute = absolute || path.starts_with("/");
  }
  for (const std::string& dir : dirs) {
    std::vector<std::string_view> parts = Components(dir);
    if (!common) {
      common = parts;
      continue;
    }
    size_t same = 0;
    while (same < common->size() && same < parts.size() && (*common)[same] == parts[same]) ++same;
    common->resize(same);
  }
  if (!common) return "";
  std::string root = absolute ? "/" : "";
  for (std::string_view part : *common) {
    if (!root.empty() && root.back() != '/') root += '/';
    root += part;
  }
  return root.empty() ? "." : root;
}

// PATH relative to ROOT, or nullopt when it is not strictly inside it.
std::optional<std::string> RelativeTo(const std::string& root, const std::string& path) {
  std::string normalized = Normalize(path);
  if (root == ".") {
    if (normalized.empty() || normalized.front() == '/') return std::nullopt;
    return normalized;
  }
  std::string prefix = root == "/" ? "/" : root + "/";
  if (!normalized.starts_with(prefix) || normalized.size() == prefix.size()) return std::nullopt;
  std::string relative = normalized.substr(prefix.size());
  if (!CheckRelativePath(relative).ok()) return std::nullopt;
  return relative;
}

}  // namespace

Result<Trace> ConvertStrace(std::string_view log, const StraceConvertOptions& options,
                            StraceConvertStats* stats) {
  RecordParser parser;
  DescriptorTracker tracker;
  std::vector<RawOp> raw;
  size_t ignored = 0;
  int line_number = 0;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    CKPTFS_ASSIGN_OR_RETURN(std::optional<SyscallRecord> record, parser.Parse(line, line_number));
    if (record) CKPTFS_RETURN_IF_ERROR(tracker.Apply(*record, raw, ignored));
  }

  std::string root = options.root.empty() ? AutoRoot(raw) : Normalize(options.root);
  if (root.empty()) {
    return Status::Invalid("the log shows no file written outside system directories; pass --strace-root DIR");
  }
  Trace trace;
  std::map<int, int> rank_of_pid;
  std::optional<double> start;
  for (RawOp& op : raw) {
    std::optional<std::string> path = RelativeTo(root, op.path);
    std::optional<std::string> target;
    if (op.kind == TraceOpKind::kRename) target = RelativeTo(root, op.target);
    if (!path || (op.kind == TraceOpKind::kRename && !target)) {
      ++ignored;
      continue;
    }
    if (!start) start = op.time_s;
    auto [it, inserted] = rank_of_pid.try_emplace(op.pid, static_cast<int>(rank_of_pid.size()));
    TraceOp out;
    out.rank = it->second;
    out.time_s = std::max(0.0, op.time_s - *start);
    out.kind = op.kind;
    out.path = std::move(*path);
    out.offset = op.offset;
    out.length = op.length;
    if (target) out.target = std::move(*target);
    trace.ops.push_back(std::move(out));
  }
  // Times within a rank must not go backwards; strace's are per-pid monotonic
  // except across a resumed call, which we timestamp at its start.
  std::map<int, double> last;
  for (TraceOp& op : trace.ops) {
    double& prev = last[op.rank];
    op.time_s = std::max(op.time_s, prev);
    prev = op.time_s;
  }
  if (stats != nullptr) {
    stats->lines = line_number;
    stats->syscalls_kept = trace.ops.size();
    stats->syscalls_ignored = ignored + parser.ignored();
    stats->root = root;
  }
  if (trace.ops.empty()) return Status::Invalid("no operations under " + root + " in the strace log");
  return trace;
}

Result<Trace> ConvertStraceFile(const std::string& path, const StraceConvertOptions& options,
                                StraceConvertStats* stats) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open strace log " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  Result<Trace> trace = ConvertStrace(buffer.str(), options, stats);
  if (!trace.ok()) return trace.status().WithContext(path);
  return trace;
}

}  // namespace ckptfs::replay
