// Trace: the text format ckpt-replay replays, one file operation per line.
//
//   ckpt-trace v1
//   # rank time_s op path offset length [target]
//   0 0.000125 write global_epoch1_step1/x.pt 0 640
//
// Paths are relative to the replay directory, percent-encoded (space, '%',
// control and non-ASCII bytes). docs/replay.md is the full specification.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ckptfs/status.h"

namespace ckptfs::replay {

enum class TraceOpKind { kMkdir, kCreate, kOpenWrite, kOpen, kWrite, kRead, kFsync, kClose, kRename, kUnlink };
std::string_view TraceOpName(TraceOpKind kind);

// The largest write or read of a trace (one buffer of the replayer): far
// above any single call a trainer makes, far below what would exhaust
// memory. Whatever makes traces splits larger ones.
inline constexpr uint64_t kMaxTraceIoBytes = uint64_t{1} << 30;

struct TraceOp {
  int rank = 0;
  double time_s = 0;  // since the trace's start; only used when replaying with timing
  TraceOpKind kind = TraceOpKind::kWrite;
  std::string path;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string target;  // rename destination
  int line = 0;        // source line, for error messages (0 when built in memory)
};

struct Trace {
  std::vector<TraceOp> ops;

  int RankCount() const;
  // The ops of one rank, in trace order (which is the order they must run in).
  std::vector<std::vector<const TraceOp*>> OpsByRank() const;
};

inline constexpr std::string_view kTraceHeader = "ckpt-trace v1";

// Errors read "line N: what is wrong".
Result<Trace> ParseTrace(std::string_view text);
Result<Trace> ReadTraceFile(const std::string& path);

std::string FormatTrace(const Trace& trace);
Status WriteTraceFile(const std::string& path, const Trace& trace);

std::string EncodeTracePath(std::string_view path);
Result<std::string> DecodeTracePath(std::string_view encoded);
// A replayable path is relative and never climbs out with "..".
Status CheckRelativePath(std::string_view path);

}  // namespace ckptfs::replay
