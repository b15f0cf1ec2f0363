// Splits tensor writes at max_write exactly as the burst runner does, so a
// replay of the emitted trace issues the same system calls as the live run.
#include "plan_trace.h"

#include <algorithm>

#include "torch_save_layout.h"

namespace ckptfs::replay {
namespace {

void AddChunked(Trace& trace, TraceOp op, uint64_t max_write) {
  uint64_t end = op.offset + op.length;
  for (uint64_t at = op.offset; at < end; at += max_write) {
    TraceOp piece = op;
    piece.offset = at;
    piece.length = std::min(max_write, end - at);
    trace.ops.push_back(piece);
  }
}

}  // namespace

Trace TraceFromPlans(const std::vector<CheckpointPlan>& plans, const PlanTraceOptions& options) {
  Trace trace;
  auto emit = [&](int rank, TraceOpKind kind, const std::string& path) {
    TraceOp op;
    op.rank = rank;
    op.kind = kind;
    op.path = path;
    trace.ops.push_back(op);
  };
  auto emit_pass = [&](const CheckpointPlan& plan, bool reading) {
    for (const RankPlan& rank : plan.ranks) {
      if (!reading && !plan.directory.empty() && !rank.files.empty()) {
        emit(rank.rank, TraceOpKind::kMkdir, plan.directory);
      }
      for (const PlannedFile& file : rank.files) {
        emit(rank.rank, reading ? TraceOpKind::kOpen : TraceOpKind::kCreate, file.relative_path);
        const TorchSaveLayout layout(file.tensor_bytes);
        for (const WriteSegment& segment : layout.segments()) {
          TraceOp io;
          io.rank = rank.rank;
          io.kind = reading ? TraceOpKind::kRead : TraceOpKind::kWrite;
          io.path = file.relative_path;
          io.offset = segment.offset;
          io.length = segment.length;
          AddChunked(trace, io, options.max_write);
        }
        if (!reading && options.fsync) emit(rank.rank, TraceOpKind::kFsync, file.relative_path);
        emit(rank.rank, TraceOpKind::kClose, file.relative_path);
      }
    }
  };
  for (const CheckpointPlan& plan : plans) emit_pass(plan, false);
  if (options.include_restore) {
    for (const CheckpointPlan& plan : plans) emit_pass(plan, true);
  }
  return trace;
}

}  // namespace ckptfs::replay
