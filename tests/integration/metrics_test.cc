// The mount's figures for Prometheus: `ckptfs-stat --prometheus` and the
// file of -o metrics_file=, read by the reference parser (python3's
// prometheus_client) and checked against the JSON stats: conventional
// names and types, the mount's labels, the file rewritten while mounted
// and left with ckptfs_up 0 at exit; and bad paths refused with a reason.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/mount_stats.h"
#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

std::string Parser() {
  return (std::filesystem::path(__FILE__).parent_path() / "data" / "parse_prometheus.py").string();
}

// `text` parsed by prometheus_client: {"types": {family: type}, "samples": [[name, labels, value]]}.
nlohmann::json Parse(const std::string& text) {
  const std::string in = std::filesystem::temp_directory_path() / ("ckptfs-prom-" + std::to_string(getpid()));
  std::ofstream(in) << text;
  CommandOutput out = Capture(std::string(kPython) + " " + Parser() + " < " + in + " 2>&1");
  std::filesystem::remove(in);
  EXPECT_EQ(out.rc, 0) << out.out << "\n--- input:\n" << text;
  return out.rc == 0 ? nlohmann::json::parse(out.out) : nlohmann::json::object();
}

// The value of sample `name` whose labels include `labels`; -1 if none.
double Value(const nlohmann::json& parsed, const std::string& name, const nlohmann::json& labels = {}) {
  for (const auto& s : parsed["samples"]) {
    if (s[0] != name) continue;
    bool match = true;
    for (const auto& [k, v] : labels.items()) match = match && s[1].contains(k) && s[1][k] == v;
    if (match) return s[2].get<double>();
  }
  return -1;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class MetricsTest : public MountedTest {
 protected:
  std::string StatPrometheus() {
    CommandOutput out = Capture(MountedStore::BinDir() + "/ckptfs-stat --prometheus " + store_.mountpoint());
    EXPECT_EQ(out.rc, 0) << out.out;
    return out.out;
  }
  nlohmann::json Json() {
    auto stats = tools::ReadMountStats(store_.mountpoint());
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    return stats.ok() ? *stats : nlohmann::json::object();
  }
};

TEST_F(MetricsTest, StatPrometheusNamesTheJsonFiguresConventionally) {
  ASSERT_TRUE(WriteFile(P("shard.pt"), Random(3 << 20, 1), true));
  ASSERT_EQ(ReadFile(P("shard.pt")).size(), 3u << 20);
  const nlohmann::json parsed = Parse(StatPrometheus());
  const nlohmann::json json = Json();  // read after: counters only grow

  // Types and names as Prometheus has them: counters end in _total, the
  // unit last.
  EXPECT_EQ(parsed["types"]["ckptfs_written_bytes"], "counter");
  EXPECT_EQ(parsed["types"]["ckptfs_segments_free"], "gauge");
  EXPECT_EQ(parsed["types"]["ckptfs_fuse_requests"], "counter");
  EXPECT_EQ(parsed["types"]["ckptfs_up"], "gauge");

  // Every sample carries the mount's labels.
  const std::string mount = std::filesystem::canonical(store_.mountpoint()).string();
  const std::string store = std::filesystem::canonical(store_.store()).string();
  for (const auto& s : parsed["samples"]) {
    EXPECT_EQ(s[1]["mount"], mount) << s.dump();
    EXPECT_EQ(s[1]["store"], store) << s.dump();
  }

  // Values: the JSON's, read just after (so at least as large).
  const double written = Value(parsed, "ckptfs_written_bytes_total");
  EXPECT_GE(written, double{3 << 20});
  EXPECT_LE(written, json["store"]["bytes_written"].get<double>());
  EXPECT_EQ(Value(parsed, "ckptfs_segment_size"), json["store"]["segment_size"].get<double>());
  EXPECT_EQ(Value(parsed, "ckptfs_segments_total"), json["store"]["segments_total"].get<double>());
  EXPECT_GE(Value(parsed, "ckptfs_fuse_requests_total", {{"op", "write"}}), 3);
  EXPECT_LE(Value(parsed, "ckptfs_fuse_requests_total", {{"op", "write"}}),
            json["fuse_requests"]["write"].get<double>());
  EXPECT_EQ(Value(parsed, "ckptfs_fuse_requests_total", {{"op", "copy_file_range"}}), 0);
  EXPECT_EQ(Value(parsed, "ckptfs_store_info", {{"store_id", std::to_string(json["store"]["store_id"].get<uint64_t>())}}),
            1);
  EXPECT_EQ(Value(parsed, "ckptfs_channel_info", {{"channel", json["channel"].get<std::string>()}}), 1);
  EXPECT_EQ(Value(parsed, "ckptfs_up"), 1);
  EXPECT_EQ(Value(parsed, "ckptfs_read_only"), 0);
}

TEST_F(MetricsTest, TheMetricsFileFollowsTheMountAndSaysWhenItStopped) {
  const std::string file = store_.dir() + "/ckptfs.prom";
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  ASSERT_TRUE(store_.Mount({"metrics_file=" + file})) << store_.log();
  nlohmann::json parsed = Parse(Slurp(file));
  EXPECT_EQ(Value(parsed, "ckptfs_up"), 1);
  const double before = Value(parsed, "ckptfs_written_bytes_total");

  // Rewritten every 5 s: the bytes written show within a few rewrites.
  ASSERT_TRUE(WriteFile(P("a"), Random(1 << 20, 2), true));
  EXPECT_TRUE(WaitFor([&] { return Value(Parse(Slurp(file)), "ckptfs_written_bytes_total") >= before + (1 << 20); },
                      20, std::chrono::milliseconds(500)));
  EXPECT_FALSE(std::filesystem::exists(file + ".tmp"));

  // At exit: the last figures, and ckptfs_up 0.
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  parsed = Parse(Slurp(file));
  EXPECT_EQ(Value(parsed, "ckptfs_up"), 0);
  EXPECT_GE(Value(parsed, "ckptfs_written_bytes_total"), before + (1 << 20));
  ASSERT_TRUE(store_.Mount()) << store_.log();
}

TEST_F(MetricsTest, AMetricsFileThatCannotBeWrittenFailsTheMountWithTheReason) {
  ASSERT_EQ(store_.Unmount(), 0) << store_.log();
  EXPECT_FALSE(store_.Mount({"metrics_file=relative/path.prom"}));
  EXPECT_NE(store_.log().find("metrics_file=relative/path.prom: give an absolute path"), std::string::npos)
      << store_.log();
  EXPECT_FALSE(store_.Mount({"metrics_file=/nonexistent-dir/ckptfs.prom"}));
  EXPECT_NE(store_.log().find("/nonexistent-dir/ckptfs.prom.tmp"), std::string::npos) << store_.log();
  ASSERT_TRUE(store_.Mount()) << store_.log();
}

}  // namespace
}  // namespace ckptfs::testing
