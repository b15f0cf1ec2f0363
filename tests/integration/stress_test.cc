// fsx-style stress through the mount: threads create, write, overwrite,
// truncate, fallocate (extend, keep-size, punch hole, zero range), write and
// read through mmap, copy ranges between files (copy_file_range), rename
// and delete files at random, and every read is
// checked against an in-memory model of what each file must contain. The run length
// is CKPTFS_STRESS_SECONDS (default 15); operation counts are printed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

int StressSeconds() {
  const char* env = std::getenv("CKPTFS_STRESS_SECONDS");
  return env ? std::max(1, std::atoi(env)) : 15;
}

// One thread's files. Names are private to the thread, so the model needs
// no lock; cross-thread traffic comes from sharing the namespace and log.
struct Worker {
  int id;
  std::mt19937_64 rng;
  std::vector<std::string> model;  // contents by slot; empty optional via `exists`
  std::vector<bool> exists;
  uint64_t ops = 0, bytes_checked = 0;
  std::string failure;
};

class StressTest : public MountedTest {
 protected:
  StressTest() : MountedTest("2G") {}

  std::string Name(int worker, int slot, bool alt = false) {
    return P("w" + std::to_string(worker) + (alt ? "/renamed-" : "/f-") + std::to_string(slot));
  }

  void Fail(Worker& w, const std::string& what) {
    if (w.failure.empty()) w.failure = what + " (errno " + std::to_string(errno) + ")";
  }

  void Step(Worker& w) {
    constexpr int kSlots = 12;
    const int slot = static_cast<int>(w.rng() % kSlots);
    const std::string path = Name(w.id, slot);
    const int op = static_cast<int>(w.rng() % 100);
    ++w.ops;
    if (!w.exists[slot]) {  // create with initial content
      size_t len = w.rng() % (3 << 20);
      std::string data(len, '\0');
      for (auto& c : data) c = static_cast<char>(w.rng());
      int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || write(fd, data.data(), len) != static_cast<ssize_t>(len) || close(fd) != 0) {
        return Fail(w, "create " + path);
      }
      w.model[slot] = std::move(data);
      w.exists[slot] = true;
      return;
    }
    std::string& model = w.model[slot];
    if (op < 30) {  // pwrite at a random offset, possibly extending
      size_t off = w.rng() % (model.size() + 65536);
      size_t len = 1 + w.rng() % (512 << 10);
      std::string data(len, '\0');
      for (auto& c : data) c = static_cast<char>(w.rng());
      int fd = open(path.c_str(), O_WRONLY);
      if (fd < 0 || pwrite(fd, data.data(), len, static_cast<off_t>(off)) != static_cast<ssize_t>(len) ||
          close(fd) != 0) {
        return Fail(w, "pwrite " + path);
      }
      if (model.size() < off + len) model.resize(off + len, '\0');
      model.replace(off, len, data);
    } else if (op < 55) {  // read a random range and compare
      size_t off = model.empty() ? 0 : w.rng() % model.size();
      size_t len = 1 + w.rng() % (1 << 20);
      std::string got(len, '\0');
      int fd = open(path.c_str(), O_RDONLY);
      ssize_t n = fd < 0 ? -1 : pread(fd, got.data(), len, static_cast<off_t>(off));
      if (fd >= 0) close(fd);
      size_t want = off < model.size() ? std::min(len, model.size() - off) : 0;
      if (n != static_cast<ssize_t>(want)) return Fail(w, "short read of " + path);
      if (got.compare(0, want, model, off, want) != 0) {
        return Fail(w, "MISMATCH reading " + path + " at " + std::to_string(off));
      }
      w.bytes_checked += want;
    } else if (op < 65) {  // truncate up or down
      size_t size = w.rng() % (model.size() + (1 << 20));
      if (truncate(path.c_str(), static_cast<off_t>(size)) != 0) return Fail(w, "truncate " + path);
      model.resize(size, '\0');
    } else if (op < 73) {  // fallocate, each mode
      static constexpr int kModes[] = {0, FALLOC_FL_KEEP_SIZE,
                                       FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                       FALLOC_FL_ZERO_RANGE,
                                       FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE};
      const int mode = kModes[w.rng() % 5];
      const size_t off = w.rng() % (model.size() + 65536);
      const size_t len = 1 + w.rng() % (768 << 10);
      int fd = open(path.c_str(), O_WRONLY);
      if (fd < 0 || fallocate(fd, mode, static_cast<off_t>(off), static_cast<off_t>(len)) != 0 ||
          close(fd) != 0) {
        return Fail(w, "fallocate mode " + std::to_string(mode) + " " + path);
      }
      if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
        const size_t end = std::min(off + len, model.size());
        if (off < end) model.replace(off, end - off, end - off, '\0');
      }
      if (!(mode & FALLOC_FL_KEEP_SIZE) && model.size() < off + len) model.resize(off + len, '\0');
    } else if (op < 79) {  // write a range through a shared mapping, then read it back by mmap
      if (model.empty()) return;
      const size_t off = w.rng() % model.size();
      const size_t len = 1 + w.rng() % std::min<size_t>(model.size() - off, 256 << 10);
      std::string data(len, '\0');
      for (auto& c : data) c = static_cast<char>(w.rng());
      int fd = open(path.c_str(), O_RDWR);
      void* map = fd < 0 ? MAP_FAILED
                         : mmap(nullptr, model.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (map == MAP_FAILED) {
        if (fd >= 0) close(fd);
        return Fail(w, "mmap " + path);
      }
      char* bytes = static_cast<char*>(map);
      std::memcpy(bytes + off, data.data(), len);
      model.replace(off, len, data);
      const bool synced = msync(map, model.size(), MS_SYNC) == 0;
      const bool same = std::memcmp(bytes, model.data(), model.size()) == 0;
      munmap(map, model.size());
      close(fd);
      if (!synced) return Fail(w, "msync " + path);
      if (!same) return Fail(w, "MISMATCH reading " + path + " through mmap");
      w.bytes_checked += model.size();
    } else if (op < 83) {  // copy_file_range from another file: shares its runs
      const int from = static_cast<int>(w.rng() % kSlots);
      if (from == slot || !w.exists[from]) return;
      const std::string& source = w.model[from];
      const size_t in_off = w.rng() % (source.size() + 4096);
      const size_t out_off = w.rng() % (model.size() + 65536);
      const size_t len = 1 + w.rng() % (2 << 20);
      const size_t want = in_off < source.size() ? std::min(len, source.size() - in_off) : 0;
      int in = open(Name(w.id, from).c_str(), O_RDONLY);
      int out = open(path.c_str(), O_WRONLY);
      loff_t in_pos = static_cast<loff_t>(in_off), out_pos = static_cast<loff_t>(out_off);
      const ssize_t n = in < 0 || out < 0 ? -1 : copy_file_range(in, &in_pos, out, &out_pos, len, 0);
      if (in >= 0) close(in);
      if (out >= 0) close(out);
      if (n != static_cast<ssize_t>(want)) return Fail(w, "copy_file_range into " + path);
      if (want > 0) {
        if (model.size() < out_off + want) model.resize(out_off + want, '\0');
        model.replace(out_off, want, source, in_off, want);
      }
    } else if (op < 87) {  // rename away and back (replacing nothing)
      std::string alt = Name(w.id, slot, true);
      if (rename(path.c_str(), alt.c_str()) != 0 || rename(alt.c_str(), path.c_str()) != 0) {
        return Fail(w, "rename " + path);
      }
    } else if (op < 93) {  // fsync
      int fd = open(path.c_str(), O_RDONLY);
      if (fd < 0 || fsync(fd) != 0) return Fail(w, "fsync " + path);
      close(fd);
    } else {  // delete
      if (unlink(path.c_str()) != 0) return Fail(w, "unlink " + path);
      w.exists[slot] = false;
      model.clear();
    }
  }

  // Every file of every worker must read back exactly as modelled.
  void VerifyAll(std::vector<Worker>& workers) {
    for (auto& w : workers) {
      for (size_t slot = 0; slot < w.model.size(); ++slot) {
        struct stat st;
        bool present = stat(Name(w.id, static_cast<int>(slot)).c_str(), &st) == 0;
        ASSERT_EQ(present, static_cast<bool>(w.exists[slot])) << Name(w.id, static_cast<int>(slot));
        if (present) {
          ASSERT_EQ(ReadFile(Name(w.id, static_cast<int>(slot))), w.model[slot])
              << Name(w.id, static_cast<int>(slot));
        }
      }
    }
  }
};

TEST_F(StressTest, RandomOperationsMatchTheModelLiveAndAfterRemount) {
  constexpr int kWorkers = 6;
  std::vector<Worker> workers(kWorkers);
  for (int i = 0; i < kWorkers; ++i) {
    workers[i].id = i;
    workers[i].rng.seed(0xC0FFEE + i);
    workers[i].model.resize(12);
    workers[i].exists.assign(12, false);
    ASSERT_EQ(mkdir(P("w" + std::to_string(i)).c_str(), 0755), 0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(StressSeconds());
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    threads.emplace_back([&, wp = &w] {
      while (wp->failure.empty() && std::chrono::steady_clock::now() < deadline) Step(*wp);
    });
  }
  for (auto& t : threads) t.join();
  uint64_t ops = 0, checked = 0;
  for (auto& w : workers) {
    ASSERT_TRUE(w.failure.empty()) << "worker " << w.id << ": " << w.failure;
    ops += w.ops;
    checked += w.bytes_checked;
  }
  std::printf("stress: %llu operations in %d s, %llu bytes checked by random reads\n",
              static_cast<unsigned long long>(ops), StressSeconds(),
              static_cast<unsigned long long>(checked));
  VerifyAll(workers);
  Remount();
  VerifyAll(workers);
}

}  // namespace
}  // namespace ckptfs::testing
