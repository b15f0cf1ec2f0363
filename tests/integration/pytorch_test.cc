// PyTorch and numpy as trainers use them, unmodified, with the mount as the
// checkpoint directory: several trainers checkpointing at once (temporary
// name, fsync, rename, fsync of the directory, keep the last N) and resuming
// in a fresh process after a crash of the daemon; a sharded save from several
// rank processes at once; numpy memmap reads of large arrays. The scripts
// are in data/; the ext4 runs next to the store are the references.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, with python3-torch

std::string DataScript(const std::string& name) {
  return (std::filesystem::path(__FILE__).parent_path() / "data" / name).string();
}

std::string Py(const std::string& script, const std::string& args) {
  return std::string(kPython) + " " + DataScript(script) + " " + args;
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename());
  return names;
}

// Runs the commands at once through /bin/sh; 0 only if every one exits 0.
int RunAll(const std::vector<std::string>& commands) {
  std::string script = "pids=''; ";
  for (const auto& c : commands) script += c + " & pids=\"$pids $!\"; ";
  script += "rc=0; for p in $pids; do wait $p || rc=1; done; exit $rc";
  return MountedStore::Run(script);
}

class PyTorchTest : public MountedTest {
 protected:
  PyTorchTest() : MountedTest("1G") {}
  void SetUp() override {
    if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " (python3-torch) is required";
    MountedTest::SetUp();
  }
  std::string Ref(const std::string& rel) { return store_.dir() + "/ref/" + rel; }
};

// Three trainers at once (and their ext4 references) save every 2 steps, keeping 2; the daemon is then
// killed (only the fsyncs count), and each trainer resumes in a fresh process
// from its `latest`; the final checkpoints equal an uninterrupted ext4 run's
// bit for bit.
TEST_F(PyTorchTest, ConcurrentTrainersRotateCheckpointsAndResumeBitIdentically) {
  constexpr int kTrainers = 3;
  std::vector<std::string> jobs;
  for (int i = 0; i < kTrainers; ++i) {
    std::string seed = " --seed " + std::to_string(i);
    jobs.push_back(Py("trainer.py", "--dir " + P("run" + std::to_string(i)) + " --steps 5 --every 2 --keep 2" + seed));
    jobs.push_back(Py("trainer.py", "--dir " + Ref("run" + std::to_string(i)) + " --steps 8 --every 2 --keep 2" + seed));
  }
  ASSERT_EQ(RunAll(jobs), 0);
  for (int i = 0; i < kTrainers; ++i) {
    // Step 5 is the last step, so it is saved too: 4 and 5 remain.
    std::set<std::string> want = {"ckpt-000004.pt", "ckpt-000005.pt", "latest"};
    EXPECT_EQ(Names(P("run" + std::to_string(i))), want) << i;
  }
  CrashAndRemount();
  std::vector<std::string> resume;
  for (int i = 0; i < kTrainers; ++i) {
    resume.push_back(Py("trainer.py", "--dir " + P("run" + std::to_string(i)) +
                                          " --steps 8 --every 2 --keep 2 --resume --seed " + std::to_string(i)) +
                     " >/dev/null");
  }
  ASSERT_EQ(RunAll(resume), 0);
  Remount();
  // One process compares everything: the final checkpoints, the older one
  // that rotation kept, and (not vacuous) two runs that must differ.
  std::string pairs;
  for (int i = 0; i < kTrainers; ++i) {
    std::string run = "run" + std::to_string(i);
    pairs += P(run) + " " + Ref(run) + " " + P(run + "/ckpt-000006.pt") + " " + Ref(run + "/ckpt-000006.pt") + " ";
    std::set<std::string> want = {"ckpt-000006.pt", "ckpt-000008.pt", "latest"};
    EXPECT_EQ(Names(P(run)), want) << run;
  }
  EXPECT_EQ(MountedStore::Run(Py("compare_ckpt.py", pairs + "--differ " + P("run0") + " " + Ref("run1")) +
                              " >/dev/null"),
            0);
}

TEST_F(PyTorchTest, ShardedSaveFromFourRankProcessesAtOnce) {
  ASSERT_EQ(MountedStore::Run(Py("sharded_save.py", "save " + P("ckpt") + " --world 4 --steps 3")), 0);
  CrashAndRemount();  // every shard, the directory rename and the rmtree were fsynced
  EXPECT_EQ(MountedStore::Run(Py("sharded_save.py", "verify " + P("ckpt") + " --world 4 --steps 3") +
                              " >/dev/null"),
            0);
}

TEST_F(PyTorchTest, NumpyMemmapReadsOfLargeArrays) {
  ASSERT_EQ(MountedStore::Run(Py("memmap_array.py", "write " + store_.mountpoint() + " --mib 64")), 0);
  // Read once from the page cache, once after a remount from the device.
  EXPECT_EQ(MountedStore::Run(Py("memmap_array.py", "read " + store_.mountpoint() + " --mib 64") +
                              " >/dev/null"),
            0);
  Remount();
  EXPECT_EQ(MountedStore::Run(Py("memmap_array.py", "read " + store_.mountpoint() + " --mib 64") +
                              " >/dev/null"),
            0);
}

}  // namespace
}  // namespace ckptfs::testing
