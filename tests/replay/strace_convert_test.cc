// strace conversion, on a recorded torch.save run (tests/replay/data) and on
// small hand-written logs for the corners: stitched calls, positional I/O,
// lseek, failed calls, roots and malformed lines.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "strace_convert.h"

namespace ckptfs::replay {
namespace {

const std::string kFixture = std::string(CKPTFS_REPLAY_TEST_DATA) + "/torch_save_2ranks.strace";

// Bytes written per path: the sum of write lengths, which for sequential
// writes is the final file size.
std::map<std::string, uint64_t> WrittenBytes(const Trace& trace) {
  std::map<std::string, uint64_t> bytes;
  for (const TraceOp& op : trace.ops) {
    if (op.kind == TraceOpKind::kWrite) bytes[op.path] += op.length;
  }
  return bytes;
}

TEST(StraceConvert, RecordedTorchSaveBecomesTwoRanksUnderTheCheckpointRoot) {
  StraceConvertStats stats;
  Result<Trace> trace = ConvertStraceFile(kFixture, {}, &stats);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(stats.root, "/tmp/st2/ckpt");
  EXPECT_EQ(trace->RankCount(), 2);  // two forked writers; the parent only made the root
  std::map<std::string, uint64_t> written = WrittenBytes(*trace);
  // File sizes torch.save produced in the recorded run.
  EXPECT_EQ(written["global_step10/mp_rank_00_model_states.pt"], 199327u);
  EXPECT_EQ(written["global_step10/mp_rank_01_model_states.pt"], 199327u);
  EXPECT_EQ(written["global_step10/zero_pp_rank_0_mp_rank_00_optim_states.pt"], 399987u);
  EXPECT_EQ(written["latest.tmp"], 13u);
  // The 256x128 fp32 weight went out as one write of its own size.
  bool saw_weight = false;
  for (const TraceOp& op : trace->ops) {
    if (op.kind == TraceOpKind::kWrite && op.path == "global_step10/mp_rank_00_model_states.pt" &&
        op.offset == 640 && op.length == 256 * 128 * 4) {
      saw_weight = true;
    }
  }
  EXPECT_TRUE(saw_weight);
  const TraceOp& last = trace->ops.back();
  EXPECT_EQ(last.kind, TraceOpKind::kRename);
  EXPECT_EQ(last.path, "latest.tmp");
  EXPECT_EQ(last.target, "latest");
  // Rank 1 read its shard back (torch.load), and both ranks made the step dir.
  int reads = 0, mkdirs = 0;
  for (const TraceOp& op : trace->ops) {
    reads += op.kind == TraceOpKind::kRead;
    mkdirs += op.kind == TraceOpKind::kMkdir;
    EXPECT_EQ(op.path.find("/usr"), std::string::npos);
  }
  EXPECT_GT(reads, 5);
  EXPECT_EQ(mkdirs, 2);
}

TEST(StraceConvert, StitchesUnfinishedCallsAndTracksPositions) {
  const char* log =
      "100 10:00:00.000000 openat(AT_FDCWD, \"/data/run/a.pt\", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 3\n"
      "100 10:00:00.000100 write(3, \"PK\\3\\4\"..., 640 <unfinished ...>\n"
      "101 10:00:00.000150 openat(AT_FDCWD, \"/usr/lib/x.so\", O_RDONLY) = 4\n"
      "100 10:00:00.000200 <... write resumed>) = 640\n"
      "100 10:00:00.000300 writev(3, [{iov_base=\"a,b\", iov_len=3}, {iov_base=\")\", iov_len=4093}], 2) = 4096\n"
      "100 10:00:00.000400 lseek(3, 100, SEEK_SET) = 100\n"
      "100 10:00:00.000500 write(3, \"x\", 10) = 10\n"
      "100 10:00:00.000600 pwrite64(3, \"y\"..., 512, 8192) = 512\n"
      "100 10:00:00.000700 fsync(3) = 0\n"
      "100 10:00:00.000800 close(3) = 0\n"
      "100 10:00:00.000900 openat(AT_FDCWD, \"/data/run/missing\", O_RDONLY) = -1 ENOENT (No such file or directory)\n"
      "100 10:00:00.001000 +++ exited with 0 +++\n";
  Result<Trace> trace = ConvertStrace(log, {});
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->ops.size(), 7u);
  EXPECT_EQ(trace->ops[0].kind, TraceOpKind::kCreate);
  EXPECT_EQ(trace->ops[0].path, "a.pt");
  EXPECT_EQ(trace->ops[1].length, 640u);
  EXPECT_NEAR(trace->ops[1].time_s, 0.0001, 1e-9);  // a stitched call keeps its start time
  EXPECT_EQ(trace->ops[2].offset, 640u);
  EXPECT_EQ(trace->ops[2].length, 4096u);
  EXPECT_EQ(trace->ops[3].offset, 100u);  // after lseek
  EXPECT_EQ(trace->ops[4].offset, 8192u);  // pwrite64's own offset
  EXPECT_EQ(trace->ops[5].kind, TraceOpKind::kFsync);
  EXPECT_EQ(trace->ops[6].kind, TraceOpKind::kClose);
}

TEST(StraceConvert, AWriteOverATracesLimitBecomesPiecesThatReplay) {
  // Linux writes at most 0x7ffff000 bytes a call: two pieces here.
  const char* log =
      "100 10:00:00.000000 openat(AT_FDCWD, \"/data/run/big.pt\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3\n"
      "100 10:00:00.000100 write(3, \"x\"..., 2147479552) = 2147479552\n"
      "100 10:00:00.000200 write(3, \"y\", 7) = 7\n";
  Result<Trace> trace = ConvertStrace(log, {});
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->ops.size(), 4u);
  EXPECT_EQ(trace->ops[1].offset, 0u);
  EXPECT_EQ(trace->ops[1].length, kMaxTraceIoBytes);
  EXPECT_EQ(trace->ops[2].offset, kMaxTraceIoBytes);
  EXPECT_EQ(trace->ops[2].length, 2147479552u - kMaxTraceIoBytes);
  EXPECT_EQ(trace->ops[3].offset, 2147479552u);
  // And the trace it writes is one the replayer reads.
  Result<Trace> again = ParseTrace(FormatTrace(*trace));
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST(StraceConvert, ExplicitRootAndPidPrefixFormat) {
  const char* log =
      "10:00:00.000000 mkdir(\"/ckpt/step1\", 0777) = 0\n"
      "[pid  7] 10:00:00.000100 openat(AT_FDCWD, \"/ckpt/step1/x\", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 5\n"
      "[pid  7] 10:00:00.000200 write(5, \"\", 4) = 4\n"
      "10:00:00.000300 openat(AT_FDCWD, \"/elsewhere/y\", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 6\n";
  StraceConvertOptions options;
  options.root = "/ckpt";
  Result<Trace> trace = ConvertStrace(log, options);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->ops.size(), 3u);
  EXPECT_EQ(trace->ops[0].path, "step1");
  EXPECT_EQ(trace->ops[0].rank, 0);
  EXPECT_EQ(trace->ops[1].rank, 1);  // pid 7, second to appear
  EXPECT_EQ(trace->ops[2].path, "step1/x");
}

TEST(StraceConvert, MalformedLinesNameTheLine) {
  auto error = [](const std::string& log) {
    Result<Trace> trace = ConvertStrace(log, {});
    return trace.ok() ? std::string("ok") : trace.status().message();
  };
  EXPECT_EQ(error("100 10:00:00.0 openat(AT_FDCWD, \"/a/b\", O_RDONLY) = 3\nhello world\n"),
            "line 2: expected a timestamp (strace -tt), got 'hello'");
  EXPECT_EQ(error("100 10:00:00.0 write(3, \"abc\", 3\n"), "line 1: unterminated argument list");
  EXPECT_EQ(error("100 10:00:00.0 close(3)\n"), "line 1: missing ' = result'");
  EXPECT_EQ(error("100 10:00:00.0 openat(AT_FDCWD, /a/b, O_RDONLY) = 3\n"),
            "line 1: expected a quoted path in openat");
  EXPECT_EQ(error("100 10:00:00.0 openat(AT_FDCWD, \"/usr/lib/a\", O_RDONLY) = 3\n"),
            "the log shows no file written outside system directories; pass --strace-root DIR");
}

}  // namespace
}  // namespace ckptfs::replay
