// Trace format: round trips, path escaping, and a clear line-numbered error
// for every kind of malformed input.
#include <gtest/gtest.h>

#include <string>

#include "trace.h"

namespace ckptfs::replay {
namespace {

std::string ErrorOf(const std::string& text) {
  Result<Trace> trace = ParseTrace(text);
  EXPECT_FALSE(trace.ok()) << "parsed: " << text;
  return trace.ok() ? "" : trace.status().message();
}

const char* kHeader = "ckpt-trace v1\n";

TEST(Trace, ParsesAllOperationsWithCommentsAndBlankLines) {
  Result<Trace> trace = ParseTrace(std::string(kHeader) +
                                   "# rank time op path offset length\n"
                                   "\n"
                                   "0 0.000000 mkdir step1 0 0\n"
                                   "0 0.000010 create step1/a.pt 0 0\n"
                                   "0 0.000020 write step1/a.pt 0 640\n"
                                   "1 0.000005 open step1/b.pt 0 0\n"
                                   "1 0.000006 read step1/b.pt 4096 8192\n"
                                   "0 0.000030 fsync step1/a.pt 0 0\n"
                                   "0 0.000040 close step1/a.pt 0 0\n"
                                   "0 0.000050 rename step1/a.pt 0 0 step1/c.pt\n"
                                   "1 0.000060 unlink step1/b.pt 0 0\n"
                                   "1 0.000070 openw step1/d.pt 0 0\n");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->ops.size(), 10u);
  EXPECT_EQ(trace->RankCount(), 2);
  EXPECT_EQ(trace->ops[2].kind, TraceOpKind::kWrite);
  EXPECT_EQ(trace->ops[2].length, 640u);
  EXPECT_EQ(trace->ops[2].line, 6);
  EXPECT_EQ(trace->ops[4].offset, 4096u);
  EXPECT_EQ(trace->ops[7].target, "step1/c.pt");
  std::vector<std::vector<const TraceOp*>> by_rank = trace->OpsByRank();
  EXPECT_EQ(by_rank[0].size(), 6u);
  EXPECT_EQ(by_rank[1].size(), 4u);
}

TEST(Trace, FormatThenParseIsIdentityIncludingOddPaths) {
  Trace trace;
  trace.ops.push_back({0, 0.25, TraceOpKind::kCreate, "dir with space/100%.pt", 0, 0, "", 0});
  trace.ops.push_back({0, 0.5, TraceOpKind::kWrite, "dir with space/100%.pt", 12, 34, "", 0});
  trace.ops.push_back({3, 1.0, TraceOpKind::kRename, "a\tb", 0, 0, "caf\xc3\xa9", 0});
  std::string text = FormatTrace(trace);
  EXPECT_NE(text.find("dir%20with%20space/100%25.pt"), std::string::npos);
  Result<Trace> back = ParseTrace(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->ops.size(), 3u);
  EXPECT_EQ(back->ops[0].path, "dir with space/100%.pt");
  EXPECT_EQ(back->ops[1].offset, 12u);
  EXPECT_EQ(back->ops[1].length, 34u);
  EXPECT_DOUBLE_EQ(back->ops[1].time_s, 0.5);
  EXPECT_EQ(back->ops[2].rank, 3);
  EXPECT_EQ(back->ops[2].path, "a\tb");
  EXPECT_EQ(back->ops[2].target, "caf\xc3\xa9");
}

TEST(Trace, MalformedInputNamesTheLine) {
  EXPECT_EQ(ErrorOf(""), "line 1: empty trace (no 'ckpt-trace v1' header)");
  EXPECT_EQ(ErrorOf("0 0 write a 0 1\n"), "line 1: expected header 'ckpt-trace v1'");
  EXPECT_EQ(ErrorOf("ckpt-trace v7\n"), "line 1: unsupported trace version 'v7' (this ckpt-replay reads v1)");
  std::string h = kHeader;
  EXPECT_EQ(ErrorOf(h + "0 0 write a 0\n"), "line 2: expected 'rank time op path offset length [target]', got 5 fields");
  EXPECT_EQ(ErrorOf(h + "# c\n0 0 explode a 0 1\n"), "line 3: unknown op 'explode'");
  EXPECT_EQ(ErrorOf(h + "-1 0 write a 0 1\n"), "line 2: rank must be an integer in 0..4095, got '-1'");
  EXPECT_EQ(ErrorOf(h + "0 soon write a 0 1\n"), "line 2: time must be seconds from 0 to 604800, got 'soon'");
  EXPECT_EQ(ErrorOf(h + "0 inf write a 0 1\n"), "line 2: time must be seconds from 0 to 604800, got 'inf'");
  EXPECT_EQ(ErrorOf(h + "0 1e300 write a 0 1\n"), "line 2: time must be seconds from 0 to 604800, got '1e300'");
  EXPECT_EQ(ErrorOf(h + "0 0 write a 0x10 1\n"), "line 2: offset must be an unsigned integer, got '0x10'");
  EXPECT_EQ(ErrorOf(h + "0 0 write a 0 -5\n"), "line 2: length must be an unsigned integer, got '-5'");
  EXPECT_EQ(ErrorOf(h + "0 0 write a 0 9223372036854775807\n"),
            "line 2: a write of at most 1073741824 bytes, got 9223372036854775807");
  EXPECT_EQ(ErrorOf(h + "0 0 read a 0 1073741825\n"), "line 2: a read of at most 1073741824 bytes, got 1073741825");
  EXPECT_EQ(ErrorOf(h + "0 0 create a 18446744073709551615 1\n"), "line 2: offset + length overflows 64 bits");
  EXPECT_EQ(ErrorOf(h + "0 0 write /etc/passwd 0 1\n"), "line 2: path must be relative: /etc/passwd");
  EXPECT_EQ(ErrorOf(h + "0 0 write a/../../x 0 1\n"), "line 2: path must not contain '..': a/../../x");
  EXPECT_EQ(ErrorOf(h + "0 0 rename a 0 0\n"), "line 2: rename needs a target path");
  EXPECT_EQ(ErrorOf(h + "0 0 write a 0 1 b\n"), "line 2: only rename takes a target path");
  EXPECT_EQ(ErrorOf(h + "0 0 write a%4 0 1\n"), "line 2: truncated %-escape in path");
  EXPECT_EQ(ErrorOf(h + "0 0 write a%zz 0 1\n"), "line 2: bad %-escape in path");
  EXPECT_EQ(ErrorOf(h + "0 2.0 write a 0 1\n1 0.5 write b 0 1\n0 1.0 write a 1 1\n"),
            "line 4: time goes backwards for rank 0");
}

}  // namespace
}  // namespace ckptfs::replay
