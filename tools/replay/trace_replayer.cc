// A rank that touches a path it has not opened opens it implicitly: strace
// shows threads by tid, and a thread may write through a descriptor another
// thread opened, which the converter records under the writer's rank.
#include "trace_replayer.h"

#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "file_io.h"
#include "progress.h"
#include "rank_threads.h"

namespace ckptfs::replay {
namespace {

class RankReplay {
 public:
  RankReplay(const ReplayOptions& options, std::chrono::steady_clock::time_point start, ProgressBar& progress)
      : options_(options), start_(start), progress_(progress) {}

  Status Run(const std::vector<const TraceOp*>& ops, RankResult& result) {
    for (const TraceOp* op : ops) {
      if (options_.honor_timing) {
        std::this_thread::sleep_until(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                   std::chrono::duration<double>(op->time_s)));
      }
      Status st = Apply(*op, result);
      if (!st.ok()) return st.WithContext("trace line " + std::to_string(op->line));
    }
    for (auto& [path, fd] : open_) CKPTFS_RETURN_IF_ERROR(fd.Close(path));
    return Status::Ok();
  }

 private:
  Result<int> Descriptor(const std::string& path, bool for_write) {
    auto it = open_.find(path);
    if (it != open_.end()) return it->second.get();
    CKPTFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, for_write ? OpenMode::kCreateKeep : OpenMode::kRead));
    return open_.emplace(path, std::move(fd)).first->second.get();
  }

  Status Open(const std::string& path, OpenMode mode, RankResult& result) {
    open_.erase(path);  // re-opening replaces the old descriptor, as a new fd would
    Result<UniqueFd> opened = OpenFile(path, mode);
    if (!opened.ok() && opened.status().IsNotFound() && mode != OpenMode::kRead) {
      // Untimed, another rank's mkdir may not have run yet; the recorded
      // program saw the directory, so make it.
      CKPTFS_RETURN_IF_ERROR(MakeDirectories(ParentDirectory(path)));
      opened = OpenFile(path, mode);
    }
    CKPTFS_ASSIGN_OR_RETURN(UniqueFd fd, std::move(opened));
    open_.emplace(path, std::move(fd));
    ++result.files;
    return Status::Ok();
  }

  Status Apply(const TraceOp& op, RankResult& result) {
    const std::string path = JoinPath(options_.dir, op.path);
    switch (op.kind) {
      case TraceOpKind::kMkdir: return MakeDirectories(path);
      case TraceOpKind::kCreate: return Open(path, OpenMode::kCreateTruncate, result);
      case TraceOpKind::kOpenWrite: return Open(path, OpenMode::kCreateKeep, result);
      case TraceOpKind::kOpen: return Open(path, OpenMode::kRead, result);
      case TraceOpKind::kWrite: {
        CKPTFS_ASSIGN_OR_RETURN(int fd, Descriptor(path, true));
        std::span<std::byte> data = Buffer(op.length);
        PayloadPattern(options_.payload, FileSeed(op.path)).Fill(op.offset, data);
        CKPTFS_RETURN_IF_ERROR(PwriteAll(fd, data, op.offset, path));
        result.bytes += op.length;
        progress_.Add(op.length);
        return Status::Ok();
      }
      case TraceOpKind::kRead: {
        CKPTFS_ASSIGN_OR_RETURN(int fd, Descriptor(path, false));
        std::span<std::byte> data = Buffer(op.length);
        CKPTFS_ASSIGN_OR_RETURN(size_t got, PreadFull(fd, data, op.offset, path));
        if (options_.verify_reads) {
          if (got != op.length) {
            return Status::Corruption(path + ": short read at offset " + std::to_string(op.offset));
          }
          if (auto bad = PayloadPattern(options_.payload, FileSeed(op.path)).FindMismatch(op.offset, data)) {
            return Status::Corruption(path + ": content mismatch at offset " + std::to_string(*bad));
          }
        }
        result.bytes += got;
        progress_.Add(got);
        return Status::Ok();
      }
      case TraceOpKind::kFsync: {
        CKPTFS_ASSIGN_OR_RETURN(int fd, Descriptor(path, true));
        return Fsync(fd, path);
      }
      case TraceOpKind::kClose: {
        auto it = open_.find(path);
        if (it == open_.end()) return Status::Ok();  // closing what we never opened: nothing to do
        Status st = it->second.Close(path);
        open_.erase(it);
        return st;
      }
      case TraceOpKind::kRename: return RenamePath(path, JoinPath(options_.dir, op.target));
      case TraceOpKind::kUnlink: return RemoveFile(path);
    }
    return Status::Invalid("unknown trace op");
  }

  std::span<std::byte> Buffer(uint64_t length) {
    if (buffer_.size() < length) buffer_.resize(length);
    return {buffer_.data(), length};
  }

  const ReplayOptions& options_;
  std::chrono::steady_clock::time_point start_;
  ProgressBar& progress_;
  std::map<std::string, UniqueFd> open_;
  std::vector<std::byte> buffer_;
};

uint64_t TotalDataBytes(const Trace& trace) {
  uint64_t total = 0;
  for (const TraceOp& op : trace.ops) {
    if (op.kind == TraceOpKind::kWrite || op.kind == TraceOpKind::kRead) total += op.length;
  }
  return total;
}

}  // namespace

Result<PhaseResult> ReplayTrace(const Trace& trace, const ReplayOptions& options) {
  if (options.dir.empty()) return Status::Invalid("--dir is required");
  CKPTFS_RETURN_IF_ERROR(MakeDirectories(options.dir));
  std::vector<std::vector<const TraceOp*>> by_rank = trace.OpsByRank();
  // Only ranks with operations get a thread and a result: the trace of one
  // node's share (ranks 4-7) has no ranks 0-3 to time.
  std::vector<int> ranks;
  for (size_t rank = 0; rank < by_rank.size(); ++rank) {
    if (!by_rank[rank].empty()) ranks.push_back(static_cast<int>(rank));
  }
  std::vector<RankResult> results(ranks.size());
  ProgressBar progress("replay " + options.label, TotalDataBytes(trace), options.progress);
  auto start = std::chrono::steady_clock::now();
  RanksOutcome outcome = RunRanksConcurrently(ranks.size(), [&](int thread) {
    results[thread].rank = ranks[thread];
    return RankReplay(options, start, progress).Run(by_rank[ranks[thread]], results[thread]);
  });
  for (size_t thread = 0; thread < ranks.size(); ++thread) {
    const Status& st = outcome.ranks[thread].status;
    if (!st.ok()) return st.WithContext("rank " + std::to_string(ranks[thread]));
  }
  PhaseResult phase;
  phase.kind = "replay";
  phase.label = options.label;
  phase.seconds = outcome.seconds;
  for (size_t thread = 0; thread < results.size(); ++thread) {
    results[thread].seconds = outcome.ranks[thread].seconds;
    phase.bytes += results[thread].bytes;
    phase.files += results[thread].files;
    phase.ranks.push_back(results[thread]);
  }
  return phase;
}

}  // namespace ckptfs::replay
