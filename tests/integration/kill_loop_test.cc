// kill -9 of the real daemon in the middle of a checkpoint burst, over and
// over: after each remount every file whose fsync (and its directory's
// fsync) returned must hold exactly its bytes, every deletion that was
// fsynced must be gone, and nothing that exists may fail to read. The
// manifest of what was durable is kept outside the mount. Rounds:
// CKPTFS_KILL_ROUNDS (default 8).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

int KillRounds() {
  const char* env = std::getenv("CKPTFS_KILL_ROUNDS");
  return env ? std::max(1, std::atoi(env)) : 8;
}

// Content is a function of the name, so the manifest only needs names.
std::string ContentFor(const std::string& name) {
  std::seed_seq seed(name.begin(), name.end());
  std::mt19937 gen(seed);
  size_t size = 4096 + gen() % (3 << 20);
  std::string s(size, '\0');
  for (char& c : s) c = static_cast<char>(gen());
  return s;
}

bool FsyncPath(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
}

// Writes `data` the way torch.save does: many writes of tensor-like sizes.
bool WriteLikeTorchSave(const std::string& path, const std::string& data, std::mt19937& gen) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < data.size()) {
    size_t piece = std::min(data.size() - done, static_cast<size_t>(64 + gen() % (700 << 10)));
    if (write(fd, data.data() + done, piece) != static_cast<ssize_t>(piece)) {
      close(fd);
      return false;
    }
    done += piece;
  }
  bool ok = fsync(fd) == 0;
  return close(fd) == 0 && ok;
}

class Manifest {
 public:
  explicit Manifest(const std::string& path) : out_(path, std::ios::app) {}
  void Durable(const std::string& rel) { Record("+", rel, true); }
  void Deleted(const std::string& rel) { Record("-", rel, false); }
  std::map<std::string, bool> entries() {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_;
  }

 private:
  void Record(const char* tag, const std::string& rel, bool present) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_[rel] = present;
    out_ << tag << " " << rel << std::endl;  // on ext4, outside the mount
  }
  std::mutex mu_;
  std::ofstream out_;
  std::map<std::string, bool> entries_;
};

class KillLoopTest : public MountedTest {
 protected:
  KillLoopTest() : MountedTest("2G") {}
};

TEST_F(KillLoopTest, FsyncedCheckpointsSurviveRepeatedKills) {
  Manifest manifest(store_.dir() + "/manifest.txt");
  std::mt19937 rng(7);
  uint64_t verified_files = 0, verified_deletions = 0, unsynced_seen = 0;
  const int rounds = KillRounds();
  for (int round = 0; round < rounds; ++round) {
    std::string dir = "step" + std::to_string(round);
    ASSERT_EQ(mkdir(P(dir).c_str(), 0755), 0) << strerror(errno);
    ASSERT_TRUE(FsyncPath(store_.mountpoint()));
    std::atomic<bool> stop{false};
    std::vector<std::thread> ranks;
    for (int r = 0; r < 4; ++r) {
      ranks.emplace_back([&, r] {
        std::mt19937 gen(round * 100 + r);
        for (int i = 0; !stop.load(); ++i) {
          std::string rel = dir + "/layer_" + std::to_string(i) + "-model_0" + std::to_string(r) +
                            "_model_states.pt";
          if (!WriteLikeTorchSave(P(rel), ContentFor(rel), gen)) return;
          if (!FsyncPath(P(dir))) return;
          manifest.Durable(rel);
        }
      });
    }
    // Retention: the checkpoint two steps back is deleted during this one.
    if (round >= 2) {
      std::string old = "step" + std::to_string(round - 2);
      for (const auto& [rel, present] : manifest.entries()) {
        if (!present || rel.rfind(old + "/", 0) != 0) continue;
        if (unlink(P(rel).c_str()) != 0) break;
        if (!FsyncPath(P(old))) break;
        manifest.Deleted(rel);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 900));
    store_.Kill();
    stop = true;
    for (auto& t : ranks) t.join();
    ASSERT_TRUE(store_.Mount()) << store_.log();

    for (const auto& [rel, present] : manifest.entries()) {
      struct stat st;
      bool exists = stat(P(rel).c_str(), &st) == 0;
      ASSERT_EQ(exists, present) << rel << " after kill " << round + 1;
      if (present) {
        ASSERT_EQ(ReadFile(P(rel)), ContentFor(rel)) << rel << " after kill " << round + 1;
        ++verified_files;
      } else {
        ++verified_deletions;
      }
    }
    // Files never confirmed durable may exist in part, but must read cleanly.
    DIR* d = opendir(P(dir).c_str());
    ASSERT_NE(d, nullptr);
    auto entries = manifest.entries();
    while (dirent* e = readdir(d)) {
      std::string rel = dir + "/" + e->d_name;
      if (e->d_name[0] == '.' || entries.count(rel)) continue;
      struct stat st;
      ASSERT_EQ(stat(P(rel).c_str(), &st), 0);
      ASSERT_EQ(ReadFile(P(rel)).size(), static_cast<size_t>(st.st_size)) << rel;
      ++unsynced_seen;
    }
    closedir(d);
  }
  std::printf("kill loop: %d kills survived; %llu durable-file and %llu deletion checks passed; "
              "%llu unconfirmed files read cleanly\n",
              rounds, static_cast<unsigned long long>(verified_files),
              static_cast<unsigned long long>(verified_deletions),
              static_cast<unsigned long long>(unsynced_seen));
}

}  // namespace
}  // namespace ckptfs::testing
