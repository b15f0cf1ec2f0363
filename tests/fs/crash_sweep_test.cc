// Crash-consistency sweep: a checkpoint burst driven through the core
// FileSystem API on a FaultInjectingDevice, with the power cut after every
// k-th device write (k swept across the whole burst), the post-cut image
// remounted and checked against a model of what each Sync() promised.
//
// The invariant checked at every cut point and every power-loss mode:
//  1. Mount succeeds.
//  2. The tree is consistent: every directory entry resolves through Lookup
//     and GetAttr to the inode ReadDir named, ".." names the parent, a
//     regular file's nlink equals the names found for it, a directory's
//     nlink is 2 + its subdirectories.
//  3. Every regular file that exists reads to its full size with no error at
//     all (no Corruption, no IOError): the core writes a record only after
//     the data it points to is flushed, so any extent in the replayed log
//     points at durable bytes, whether or not its file was ever synced.
//  4. The recovered tree is exactly the model's state after some prefix of
//     the operations (at record granularity: a write larger than 1 MiB is
//     one record per 1 MiB piece, so a half-applied large write is a valid
//     prefix), and that prefix contains every operation that happened before
//     the last Sync() that returned OK. Since Sync commits all pending
//     metadata, that means: everything fsynced is there byte for byte,
//     everything after it is either absent or present as a later state of
//     the same sequence (a commit whose final flush failed may still have
//     reached the media), never a mix that no prefix explains.
//     With several threads the same holds per thread for the paths only that
//     thread touches (each rank owns its files, the main thread owns the
//     directories and "latest").
//  5. The store is writable afterwards: create + write + sync, remount, and
//     the new file reads back.
//
// Knobs: CKPTFS_CRASH_SWEEP_STORE_MIB=n sets the store size (default 48);
// CKPTFS_CRASH_SWEEP_STRIDE=n sweeps every n-th cut point (1 = every
// write; the default keeps about 150 cut points);
// CKPTFS_CRASH_SWEEP_POINTS=n keeps about n cut points in every sweep,
// spread over the whole burst (the sanitized runs, where a mount costs ten
// times as much, check the same paths at fewer points); CKPTFS_CRASH_SWEEP_SEEDS=n
// checks n random-loss images per cut point (default 1);
// CKPTFS_CRASH_SWEEP_ONLY=k runs the single cut point k (for reproducing a
// failure; the seed in a failure message is cut + i * 1000003).
#include <gtest/gtest.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ckptfs/filesystem.h"
#include "io/fault_injection_device.h"
#include "io/memory_device.h"
#include "open_device.h"
#include "util/crc32c.h"

namespace ckptfs {
namespace {

long EnvInt(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::strtol(v, nullptr, 10);
}

// 48 MiB = 23 segments of 2 MiB: the burst writes 72 MiB, so space is reused
// (CKPTFS_CRASH_SWEEP_STORE_MIB overrides it; 42-44 MiB makes the cleaner run).
const uint64_t kStoreSize = static_cast<uint64_t>(EnvInt("CKPTFS_CRASH_SWEEP_STORE_MIB", 48))
                            << 20;
constexpr uint64_t kSegmentSize = 2ull << 20;
constexpr uint64_t kMemoryBudget = 8ull << 20;  // 4 segment buffers: seal and flush often
constexpr size_t kMaxAppend = 1 << 20;          // the core writes one record per 1 MiB piece
constexpr uint64_t kRoot = 1;
constexpr int kDefaultCutPoints = 150;
constexpr int kDefaultThreadedCutPoints = 40;

MountOptions SweepMountOptions(unsigned flushers = 2, const std::string& compress = "none") {
  MountOptions m;
  m.compress = compress;
  m.memory_budget = kMemoryBudget;
  m.flusher_threads = flushers;
  m.commit_interval_ms = 600000;  // no background commits: only Sync() commits
  // Compact the metadata log every few dozen commits, so cut points land in
  // compactions (snapshot chain, superblock switch, old chain freed) too.
  m.compact_log_bytes = 128 << 10;
  return m;
}

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Bytes [pos, pos + n) of the deterministic byte stream `seed`. Shaped like
// bf16 tensors (every second byte one of four exponent-like values), so the
// compressed sweeps store compressed runs, not raw fallbacks.
void Pattern(uint64_t seed, uint64_t pos, char* dst, size_t n) {
  const uint64_t key = Mix(seed);
  while (n > 0) {
    uint64_t word = Mix(key ^ (pos / 8));
    word = (word & 0x00FF00FF00FF00FFull) | ((word & 0x0300030003000300ull) | 0x3C003C003C003C00ull);
    const size_t in = pos % 8;
    const size_t take = std::min<size_t>(8 - in, n);
    std::memcpy(dst, reinterpret_cast<const char*>(&word) + in, take);
    dst += take;
    pos += take;
    n -= take;
  }
}

// ---------------------------------------------------------------------------
// The model: each file's content is its list of mutations (each one record
// in the core's log), so any version can be rebuilt without storing it.

struct Mutation {
  bool truncate = false;
  uint64_t offset = 0;  // truncate: the new size
  uint64_t len = 0;
  uint64_t seed = 0;
  uint64_t skip = 0;  // position in the seed's stream of the first byte
};

class Model {
 public:
  int64_t NewFile() {
    std::lock_guard<std::mutex> lock(mu_);
    files_.emplace_back();
    return static_cast<int64_t>(files_.size()) - 1;
  }
  // Only the file's owner thread appends; references stay valid (deque).
  std::vector<Mutation>& mutations(int64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    return files_[static_cast<size_t>(id)];
  }
  uint64_t SizeAt(int64_t id, size_t version) {
    uint64_t size = 0;
    const auto& m = mutations(id);
    for (size_t i = 0; i < version; ++i) {
      size = m[i].truncate ? m[i].offset : std::max(size, m[i].offset + m[i].len);
    }
    return size;
  }
  std::string ContentAt(int64_t id, size_t version) {
    std::string out;
    const auto& m = mutations(id);
    for (size_t i = 0; i < version; ++i) {
      if (m[i].truncate) {
        out.resize(m[i].offset);  // growing fills with zeros, as holes read
        continue;
      }
      if (out.size() < m[i].offset + m[i].len) out.resize(m[i].offset + m[i].len);
      Pattern(m[i].seed, m[i].skip, out.data() + m[i].offset, m[i].len);
    }
    return out;
  }
  uint32_t CrcAt(int64_t id, size_t version) {
    auto key = std::make_pair(id, version);
    auto it = crc_memo_.find(key);
    if (it != crc_memo_.end()) return it->second;
    std::string c = ContentAt(id, version);
    uint32_t crc = crc32c::Value(c.data(), c.size());
    crc_memo_[key] = crc;
    return crc;
  }

 private:
  std::mutex mu_;
  std::deque<std::vector<Mutation>> files_;
  std::map<std::pair<int64_t, size_t>, uint32_t> crc_memo_;  // verification only
};

struct NodeRef {
  int64_t file = -1;  // -1: a directory
  size_t version = 0;
  bool operator==(const NodeRef& o) const { return file == o.file && version == o.version; }
};
using Snapshot = std::map<std::string, NodeRef>;

// The paths one thread owns, and the states they went through since that
// thread's last Sync() that returned OK (history[0] is the state then).
struct Owner {
  Snapshot live;
  std::vector<Snapshot> history{Snapshot{}};
  std::set<std::string> ever;
  uint64_t ok_syncs = 0;

  void Changed() { history.push_back(live); }
  void Synced() {
    history.assign(1, live);
    ++ok_syncs;
  }
};

// ---------------------------------------------------------------------------
// The workload: a few checkpoint steps, each written by several ranks in
// torch.save-shaped pieces, fsync per file, publish by rename, retention.

struct WorkloadConfig {
  int ranks = 4;
  int layers = 2;
  int steps = 6;
  int first_step = 1;  // > 1: resuming on a store that holds earlier steps
  bool threaded = false;
  std::string compress = "none";  // the mount's compress= while the burst runs
};

class Workload {
 public:
  Workload(FileSystem* fs, Model* model, const WorkloadConfig& config)
      : fs_(fs), model_(model), config_(config), owners_(config.threaded ? config.ranks + 1 : 1) {}

  // Starts from a recovered store whose (single-threaded) state is `state`.
  void Resume(const Snapshot& state, const std::set<std::string>& ever) {
    owners_[0].live = state;
    owners_[0].history.assign(1, state);
    owners_[0].ever = ever;
  }

  // Runs to the end or to the first failed operation; returns that failure.
  Status Run() {
    for (int step = config_.first_step; step <= config_.steps && !stopped(); ++step) {
      Owner& main = owners_[0];
      const std::string dir = StepDir(step);
      auto d = fs_->Mkdir(kRoot, dir, 0755, 0, 0);
      main.live[dir] = NodeRef{};
      main.ever.insert(dir);
      main.Changed();
      if (!Check(d.status())) break;
      dir_ino_[step] = d->st_ino;
      fs_->Forget(d->st_ino, 1);
      if (!Sync(main)) break;

      if (config_.threaded) {
        std::vector<std::thread> threads;
        for (int r = 0; r < config_.ranks; ++r) {
          threads.emplace_back([this, step, r] { RankStep(owners_[r + 1], step, r); });
        }
        for (auto& t : threads) t.join();
      } else {
        for (int r = 0; r < config_.ranks && !stopped(); ++r) RankStep(main, step, r);
      }
      if (stopped()) break;
      if (!Publish(main, step)) break;
      if (step > config_.first_step) {
        const std::string old = StepDir(step - 1);
        Status s = fs_->Rmdir(kRoot, old);
        main.live.erase(old);
        main.Changed();
        if (!Check(s) || !Sync(main)) break;
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    return first_error_;
  }

  std::vector<Owner>& owners() { return owners_; }
  uint64_t operations() const { return ops_.load(); }

 private:
  static std::string StepDir(int step) { return "global_step" + std::to_string(step); }
  static std::string FileName(int layer, int rank) {
    return "layer_" + std::to_string(layer) + "-model_" + std::to_string(rank) +
           "_model_states.pt";
  }

  bool stopped() const { return stop_.load(); }
  // Records a failure; returns s.ok().
  bool Check(const Status& s) {
    ops_.fetch_add(1);
    if (s.ok()) return true;
    std::lock_guard<std::mutex> lock(mu_);
    if (first_error_.ok()) first_error_ = s;
    stop_.store(true);
    return false;
  }
  bool Sync(Owner& owner) {
    if (stopped()) return false;
    if (!Check(fs_->Sync())) return false;
    owner.Synced();
    return true;
  }

  // Writes `len` bytes of stream `seed` at `offset`, recording one version
  // per 1 MiB piece (the core's record granularity).
  bool WriteRange(Owner& owner, const std::string& path, uint64_t ino, uint64_t offset,
                  size_t len, uint64_t seed) {
    if (stopped()) return false;
    std::string buf(len, '\0');
    Pattern(seed, 0, buf.data(), len);
    auto w = fs_->Write(ino, offset, buf.data(), len);
    NodeRef& ref = owner.live[path];
    auto& muts = model_->mutations(ref.file);
    for (size_t done = 0; done < len; done += kMaxAppend) {
      Mutation m;
      m.offset = offset + done;
      m.len = std::min(kMaxAppend, len - done);
      m.seed = seed;
      m.skip = done;
      muts.push_back(m);
      ref.version = muts.size();
      owner.Changed();
    }
    if (w.ok() && *w != len) return Check(Status::IOError("short write"));
    return Check(w.status());
  }

  bool Truncate(Owner& owner, const std::string& path, uint64_t ino, uint64_t size) {
    if (stopped()) return false;
    AttrChange c;
    c.set_size = true;
    c.size = size;
    auto r = fs_->SetAttr(ino, c);
    NodeRef& ref = owner.live[path];
    auto& muts = model_->mutations(ref.file);
    Mutation m;
    m.truncate = true;
    m.offset = size;
    muts.push_back(m);
    ref.version = muts.size();
    owner.Changed();
    return Check(r.status());
  }

  // Creates `dir_path/name` in directory `dir`; returns its inode or 0.
  uint64_t CreateFile(Owner& owner, uint64_t dir, const std::string& path,
                      const std::string& name) {
    if (stopped()) return 0;
    auto st = fs_->Create(dir, name, 0644, 0, 0);
    owner.live[path] = NodeRef{model_->NewFile(), 0};
    owner.ever.insert(path);
    owner.Changed();
    if (!Check(st.status())) return 0;
    return st->st_ino;
  }

  bool Rename(Owner& owner, uint64_t dir, const std::string& from_path,
              const std::string& from, const std::string& to_path, const std::string& to) {
    if (stopped()) return false;
    Status s = fs_->Rename(dir, from, dir, to, 0);
    owner.live[to_path] = owner.live[from_path];
    owner.live.erase(from_path);
    owner.ever.insert(to_path);
    owner.Changed();
    return Check(s);
  }

  // One torch.save: a tmp file written in tensor-sized pieces, patched,
  // sometimes truncated, fsynced, renamed to its final name, fsynced.
  void WriteCheckpointFile(Owner& owner, int step, int rank, int layer) {
    const std::string dir = StepDir(step);
    const std::string name = FileName(layer, rank);
    const std::string tmp = name + ".tmp";
    const std::string tmp_path = dir + "/" + tmp;
    const std::string path = dir + "/" + name;
    const uint64_t dir_ino = dir_ino_.at(step);
    const uint64_t key = (static_cast<uint64_t>(step) << 32) | (rank << 16) | layer;
    std::mt19937_64 rng(Mix(key));

    uint64_t ino = CreateFile(owner, dir_ino, tmp_path, tmp);
    if (!ino) return;
    const uint64_t variant = key + static_cast<uint64_t>(step) * 7;
    if (variant % 6 == 3) {  // a writer that reserves first: content stays as written
      if (!Check(fs_->Fallocate(ino, FALLOC_FL_KEEP_SIZE, 0, 2 << 20, SetIdDrop::kNone))) return;
    }
    uint64_t size = 0;
    const int pieces = 3 + static_cast<int>(rng() % 7);
    for (int p = 0; p < pieces; ++p) {
      // torch.save's mix: pickled headers, small tensors, big tensors.
      const uint64_t kind = rng() % 100;
      size_t len = kind < 40   ? 100 + rng() % 4000
                   : kind < 75 ? 4096 + rng() % (252 << 10)
                               : (256 << 10) + rng() % (1280 << 10);  // up to 1.5 MiB
      if (!WriteRange(owner, tmp_path, ino, size, len, Mix(key * 131 + p))) return;
      size += len;
    }
    if (variant % 3 == 0) {  // patch a range already written (a header rewrite)
      const size_t len = 4096 + rng() % 8000;
      const uint64_t at = rng() % std::min<uint64_t>(size, 64 << 10);
      if (!WriteRange(owner, tmp_path, ino, at, len, Mix(key * 977))) return;
      size = std::max<uint64_t>(size, at + len);
    }
    if (variant % 4 == 1) {  // truncate down, then write a new tail
      size = size * 2 / 3;
      if (!Truncate(owner, tmp_path, ino, size)) return;
      if (!WriteRange(owner, tmp_path, ino, size, 50000, Mix(key * 31337))) return;
      size += 50000;
    }
    if (variant % 5 == 2) {  // truncate up: a hole at the end
      size += 10000 + rng() % 5000;
      if (!Truncate(owner, tmp_path, ino, size)) return;
    }
    if (!Sync(owner)) return;  // fsync per file
    if (!Rename(owner, dir_ino, tmp_path, tmp, path, name)) return;
    if (!Sync(owner)) return;  // the publish is durable
    // A milestone copy (cp, which uses copy_file_range) of a file whose
    // extents are its writes in order, so the copy's records, one per
    // extent, pass through the same states as the model's mutations.
    if (variant % 7 == 4 && variant % 3 != 0 && variant % 4 != 1) {
      CopyToMilestone(owner, path, ino, "milestone_" + std::to_string(step) + "_" + name);
    }
    fs_->Forget(ino, 1);
  }

  // Copies the file at `from_path` to a new file `name` in the root, sharing
  // its runs; the original is deleted later by retention, the copy stays.
  void CopyToMilestone(Owner& owner, const std::string& from_path, uint64_t from_ino,
                       const std::string& name) {
    uint64_t ino = CreateFile(owner, kRoot, name, name);
    if (!ino) return;
    const NodeRef from = owner.live.at(from_path);
    const std::vector<Mutation>& source = model_->mutations(from.file);
    const std::vector<Mutation> copied(source.begin(),
                                       source.begin() + static_cast<long>(from.version));
    auto n = fs_->CopyRange(from_ino, 0, ino, 0, uint64_t{1} << 40);
    NodeRef& ref = owner.live[name];
    auto& muts = model_->mutations(ref.file);
    for (const Mutation& m : copied) {
      muts.push_back(m);
      ref.version = muts.size();
      owner.Changed();
    }
    fs_->Forget(ino, 1);
    Check(n.status());
  }

  void RankStep(Owner& owner, int step, int rank) {
    for (int layer = 0; layer < config_.layers && !stopped(); ++layer) {
      WriteCheckpointFile(owner, step, rank, layer);
    }
    if (step == config_.first_step || stopped()) return;
    // Retention: this rank's files of the previous step go.
    const uint64_t old_dir = dir_ino_.at(step - 1);
    for (int layer = 0; layer < config_.layers; ++layer) {
      if (stopped()) return;
      const std::string name = FileName(layer, rank);
      Status s = fs_->Unlink(old_dir, name);
      owner.live.erase(StepDir(step - 1) + "/" + name);
      owner.Changed();
      if (!Check(s)) return;
    }
    Sync(owner);
  }

  // Points "latest" at the step: tmp + rename over the old one.
  bool Publish(Owner& main, int step) {
    const std::string text = StepDir(step);
    const std::string tmp = "latest." + std::to_string(step) + ".tmp";
    uint64_t ino = CreateFile(main, kRoot, tmp, tmp);
    if (!ino) return false;
    if (!WriteRange(main, tmp, ino, 0, text.size() + 16, Mix(step))) return false;
    if (!Sync(main)) return false;
    if (!Rename(main, kRoot, tmp, tmp, "latest", "latest")) return false;
    if (!Sync(main)) return false;
    fs_->Forget(ino, 1);
    return true;
  }

  FileSystem* const fs_;
  Model* const model_;
  const WorkloadConfig config_;
  std::vector<Owner> owners_;
  std::map<int, uint64_t> dir_ino_;  // written by the main thread between phases
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> ops_{0};
  std::mutex mu_;
  Status first_error_;
};

// ---------------------------------------------------------------------------
// Checking a remounted image.

struct SweepCounts {
  uint64_t cut_points = 0;
  uint64_t images = 0;
  uint64_t mounts = 0;
  uint64_t entries = 0;        // directory entries resolved and checked
  uint64_t files = 0;          // regular files read in full and matched
  uint64_t bytes = 0;          // bytes read back and checksummed
  uint64_t fsynced_files = 0;  // files the last OK Sync covered, found intact
  uint64_t later_states = 0;   // owners recovered past their last OK Sync
  uint64_t probes = 0;         // post-crash create+write+sync+remount checks
  uint64_t full_stores = 0;    // probes refused with ENOSPC by a store >= 75% live
  uint64_t runs_compacted = 0, runs_cleaned = 0;  // cut runs where these ran before the cut
  uint64_t unsynced_writes = 0, kept = 0, dropped = 0, torn = 0;
  std::vector<std::string> failures;

  void Print(const char* name) const {
    std::printf(
        "[ crash sweep ] %s: %llu cut points, %llu power-loss images, %llu mounts, %llu "
        "entries, %llu files (%.1f MiB) read back and matched, %llu fsynced files found "
        "intact, %llu owners past their last sync, %llu writability probes (%llu more refused "
        "by a full store); unsynced writes at the cuts: %llu (%llu kept, %llu dropped, %llu "
        "torn); cut runs with a log compaction: %llu, with segment cleaning: %llu; %zu "
        "failures\n",
        name, (unsigned long long)cut_points, (unsigned long long)images,
        (unsigned long long)mounts, (unsigned long long)entries, (unsigned long long)files,
        bytes / 1048576.0, (unsigned long long)fsynced_files, (unsigned long long)later_states,
        (unsigned long long)probes, (unsigned long long)full_stores,
        (unsigned long long)unsynced_writes,
        (unsigned long long)kept, (unsigned long long)dropped, (unsigned long long)torn,
        (unsigned long long)runs_compacted, (unsigned long long)runs_cleaned, failures.size());
    std::fflush(stdout);
  }
};

struct Found {
  bool dir = false;
  uint64_t ino = 0;
  uint64_t size = 0;
  uint32_t crc = 0;
};

class Checker {
 public:
  Checker(FileSystem* fs, SweepCounts* counts) : fs_(fs), counts_(counts) {}

  // Walks the whole tree; returns "" or what is wrong.
  std::string Walk() {
    std::string err = WalkDir(kRoot, kRoot, "");
    if (!err.empty()) return err;
    for (const auto& [ino, names] : names_) {
      if (nlink_[ino] != names) {
        return "inode " + std::to_string(ino) + " has nlink " + std::to_string(nlink_[ino]) +
               " but " + std::to_string(names) + " name(s)";
      }
    }
    return "";
  }
  const std::map<std::string, Found>& found() const { return found_; }

 private:
  std::string WalkDir(uint64_t dir, uint64_t parent, const std::string& prefix) {
    std::vector<std::pair<std::string, uint64_t>> entries;
    Status s = fs_->ReadDir(dir, 0, false,
                            [&](std::string_view name, const struct stat& st, uint64_t) {
                              entries.emplace_back(std::string(name), st.st_ino);
                              return true;
                            });
    if (!s.ok()) return "readdir of '" + prefix + "': " + s.ToString();
    auto dotdot = fs_->Lookup(dir, "..");
    if (!dotdot.ok() || dotdot->st_ino != parent) {
      return "'" + prefix + "/..' does not name its parent";
    }
    fs_->Forget(dotdot->st_ino, 1);
    uint32_t subdirs = 0;
    for (const auto& [name, listed_ino] : entries) {
      if (name == "." || name == "..") continue;
      const std::string path = prefix.empty() ? name : prefix + "/" + name;
      counts_->entries += 1;
      auto l = fs_->Lookup(dir, name);
      if (!l.ok()) return "dangling entry '" + path + "': " + l.status().ToString();
      fs_->Forget(l->st_ino, 1);
      if (l->st_ino != listed_ino) return "'" + path + "': readdir and lookup disagree";
      auto a = fs_->GetAttr(l->st_ino);
      if (!a.ok()) return "'" + path + "' names a missing inode: " + a.status().ToString();
      Found f;
      f.ino = a->st_ino;
      if (S_ISDIR(a->st_mode)) {
        ++subdirs;
        f.dir = true;
        found_[path] = f;
        std::string err = WalkDir(a->st_ino, dir, path);
        if (!err.empty()) return err;
      } else if (S_ISREG(a->st_mode)) {
        names_[a->st_ino] += 1;
        nlink_[a->st_ino] = static_cast<uint32_t>(a->st_nlink);
        f.size = static_cast<uint64_t>(a->st_size);
        std::string err = ReadAll(path, f.ino, f.size, &f.crc);
        if (!err.empty()) return err;
        found_[path] = f;
      } else {
        return "'" + path + "' has unexpected mode " + std::to_string(a->st_mode);
      }
    }
    auto self = fs_->GetAttr(dir);
    if (!self.ok()) return "directory '" + prefix + "' vanished";
    if (self->st_nlink != 2 + subdirs) {
      return "directory '" + prefix + "' has nlink " + std::to_string(self->st_nlink) +
             " with " + std::to_string(subdirs) + " subdirectories";
    }
    return "";
  }

  std::string ReadAll(const std::string& path, uint64_t ino, uint64_t size, uint32_t* crc) {
    std::string buf(kMaxAppend, '\0');
    uint32_t c = 0;
    for (uint64_t off = 0; off < size;) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - off));
      auto r = fs_->Read(ino, off, want, buf.data());
      if (!r.ok()) {
        return "read of '" + path + "' at " + std::to_string(off) + ": " + r.status().ToString();
      }
      if (*r != want) return "short read of '" + path + "' at " + std::to_string(off);
      c = crc32c::Extend(c, buf.data(), want);
      off += want;
    }
    counts_->bytes += size;
    *crc = c;
    return "";
  }

  FileSystem* const fs_;
  SweepCounts* const counts_;
  std::map<std::string, Found> found_;
  std::map<uint64_t, uint32_t> names_;
  std::map<uint64_t, uint32_t> nlink_;
};

bool SnapshotMatches(const Snapshot& snap, const std::map<std::string, Found>& got, Model* model) {
  if (snap.size() != got.size()) return false;
  for (const auto& [path, ref] : snap) {
    auto it = got.find(path);
    if (it == got.end()) return false;
    if (ref.file < 0) {
      if (!it->second.dir) return false;
      continue;
    }
    if (it->second.dir || it->second.size != model->SizeAt(ref.file, ref.version)) return false;
  }
  for (const auto& [path, ref] : snap) {
    if (ref.file >= 0 && got.at(path).crc != model->CrcAt(ref.file, ref.version)) return false;
  }
  return true;
}

// Says how `got` differs from `snap` (for failure messages).
std::string Differences(const Snapshot& snap, const std::map<std::string, Found>& got,
                        Model* model) {
  std::string out;
  int shown = 0;
  auto add = [&](const std::string& s) {
    if (shown++ < 6) out += "\n      " + s;
  };
  for (const auto& [path, ref] : snap) {
    auto it = got.find(path);
    if (it == got.end()) {
      add("missing: " + path);
      continue;
    }
    if (ref.file < 0) {
      if (!it->second.dir) add("not a directory: " + path);
      continue;
    }
    const uint64_t size = model->SizeAt(ref.file, ref.version);
    if (it->second.size != size) {
      add(path + ": size " + std::to_string(it->second.size) + ", want " + std::to_string(size));
    } else if (it->second.crc != model->CrcAt(ref.file, ref.version)) {
      add(path + ": content differs (size " + std::to_string(size) + ")");
    }
  }
  for (const auto& [path, f] : got) {
    if (!snap.count(path)) add("unexpected: " + path);
  }
  return out;
}

// Remounts `image` and checks the invariant in the file comment. Returns ""
// or a description of the first violation.
// `matched`, if given, receives for each owner the index of the history
// state the image holds. With `probe` false the image is left as recovered
// (nothing written beyond what mount itself writes).
std::string VerifyImage(MemoryDevice* image, Model* model, std::vector<Owner>& owners,
                        SweepCounts* counts, std::vector<size_t>* matched_states = nullptr,
                        bool probe = true) {
  if (matched_states) matched_states->assign(owners.size(), 0);
  // Mounted through a pass-through FaultInjectingDevice so that, without the
  // probe, the power can go off before the unmount commits anything.
  FaultInjectingDevice guard(BorrowDevice(image));
  auto opened = OpenFileSystemOnDevice(BorrowDevice(&guard), SweepMountOptions());
  if (!opened.ok()) return "mount failed: " + opened.status().ToString();
  counts->mounts += 1;
  std::unique_ptr<FileSystem> fs = std::move(opened).value();
  fs->Start();
  Checker checker(fs.get(), counts);
  std::string err = checker.Walk();
  if (!err.empty()) return "inconsistent tree: " + err;
  const auto& found = checker.found();

  std::set<std::string> claimed;
  for (size_t o = 0; o < owners.size(); ++o) {
    Owner& owner = owners[o];
    std::map<std::string, Found> mine;
    for (const auto& [path, f] : found) {
      if (owner.ever.count(path)) {
        mine[path] = f;
        claimed.insert(path);
      }
    }
    bool matched = false;
    for (size_t j = owner.history.size(); j-- > 0;) {
      if (SnapshotMatches(owner.history[j], mine, model)) {
        matched = true;
        if (matched_states) (*matched_states)[o] = j;
        if (j > 0) counts->later_states += 1;
        for (const auto& [path, ref] : owner.history[0]) {
          if (ref.file >= 0 && owner.history[j].count(path) && owner.history[j].at(path) == ref) {
            counts->fsynced_files += 1;
          }
        }
        break;
      }
    }
    if (!matched) {
      return "owner " + std::to_string(o) + ": recovered state is no prefix of the operations (" +
             std::to_string(owner.history.size() - 1) +
             " operation(s) since its last OK sync); against the fsynced state:" +
             Differences(owner.history[0], mine, model) + "\n    against the latest state:" +
             Differences(owner.history.back(), mine, model);
    }
  }
  for (const auto& [path, f] : found) {
    if (!claimed.count(path)) return "a path no operation created: " + path;
    if (!f.dir) counts->files += 1;
  }
  if (!probe) {
    guard.PowerOff();  // the image stays exactly as the crash left it
    fs.reset();
    return "";
  }

  // Writable: create + write + sync, remount, read back.
  const std::string probe_name = "after-crash-probe";
  std::string data(300000, '\0');
  Pattern(4242, 0, data.data(), data.size());
  auto st = fs->Create(kRoot, probe_name, 0644, 0, 0);
  if (!st.ok()) return "create after remount: " + st.status().ToString();
  auto w = fs->Write(st->st_ino, 0, data.data(), data.size());
  if (!w.ok()) {
    StoreStats ss = fs->Stats();
    // A store that is genuinely full (no cleaner can help: most of what is
    // left for user data is live) may refuse; a crash must not leak space.
    const uint64_t usable = (ss.segments_total - ss.segments_meta - 4) * kSegmentSize;
    if (w.status().IsNoSpace() && ss.live_bytes * 4 >= usable * 3) {
      counts->full_stores += 1;
      return "";
    }
    uint64_t file_bytes = 0;
    for (const auto& [path, f] : found) file_bytes += f.size;
    return "write after remount: " + w.status().ToString() + " (segments: " +
           std::to_string(ss.segments_free) + " free, " + std::to_string(ss.segments_data) +
           " data, " + std::to_string(ss.segments_meta) + " meta of " +
           std::to_string(ss.segments_total) + "; live bytes " + std::to_string(ss.live_bytes) +
           ", file bytes " + std::to_string(file_bytes) + ", " + std::to_string(found.size()) +
           " entries)";
  }
  Status s = fs->Sync();
  if (!s.ok()) return "sync after remount: " + s.ToString();
  fs->Forget(st->st_ino, 1);
  s = fs->Close();
  if (!s.ok()) return "close after remount: " + s.ToString();
  fs.reset();
  auto again = OpenFileSystemOnDevice(BorrowDevice(image), SweepMountOptions());
  if (!again.ok()) return "second remount: " + again.status().ToString();
  fs = std::move(again).value();
  auto l = fs->Lookup(kRoot, probe_name);
  if (!l.ok()) return "probe lost over remount: " + l.status().ToString();
  std::string back(data.size(), '\0');
  auto r = fs->Read(l->st_ino, 0, back.size(), back.data());
  if (!r.ok() || *r != data.size() || back != data) return "probe reads back wrong";
  fs->Forget(l->st_ino, 1);
  counts->probes += 1;
  return "";
}

// ---------------------------------------------------------------------------

struct Run {
  std::unique_ptr<FaultInjectingDevice> device;
  std::shared_ptr<Model> model = std::make_shared<Model>();
  std::vector<Owner> owners;
  Status status;
  uint64_t writes = 0;  // device writes the workload made
  uint64_t operations = 0;
  StoreStats stats;
};

// Devices reused across runs: allocating (and faulting in) a fresh store per
// run and per image costs more than the sweep itself. A formatted template is
// copied into the base device before every run; images are built over one
// buffer. Only one Run may be alive at a time.
struct DevicePool {
  DevicePool() : formatted(kStoreSize), base(kStoreSize), image(kStoreSize) {
    FormatOptions f;
    f.segment_size = kSegmentSize;
    Status s = FormatDevice(&formatted, f);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  MemoryDevice formatted, base, image;
  std::unique_ptr<MemoryDevice> resume;  // a recovered image to resume on
};

DevicePool& Pool() {
  static DevicePool* pool = new DevicePool();
  return *pool;
}

// A fresh store, `arm` sets up the faults, the workload runs to its end or
// its first failure, and the power goes off before the filesystem goes away
// (so its last-gasp commit in Close cannot change the image).
// Resuming (config.first_step > 1) starts from pool.resume, whose state is
// `resume_state` of `resume_model`'s files.
std::unique_ptr<Run> RunWorkload(const WorkloadConfig& config,
                                 const std::function<void(FaultInjectingDevice&)>& arm,
                                 std::shared_ptr<Model> resume_model = nullptr,
                                 const Owner* resume_state = nullptr) {
  auto run = std::make_unique<Run>();
  DevicePool& pool = Pool();
  MemoryDevice* start = resume_state ? pool.resume.get() : &pool.formatted;
  if (resume_model) run->model = resume_model;
  std::memcpy(pool.base.bytes().data(), start->bytes().data(), kStoreSize);
  run->device = std::make_unique<FaultInjectingDevice>(BorrowDevice(&pool.base));
  auto opened = OpenFileSystemOnDevice(BorrowDevice(run->device.get()),
                                       SweepMountOptions(2, config.compress));
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  if (!opened.ok()) {
    run->status = opened.status();
    return run;
  }
  std::unique_ptr<FileSystem> fs = std::move(opened).value();
  fs->Start();
  const uint64_t before = run->device->writes();
  arm(*run->device);
  Workload workload(fs.get(), run->model.get(), config);
  if (resume_state) workload.Resume(resume_state->live, resume_state->ever);
  run->status = workload.Run();
  run->writes = run->device->writes() - before;
  run->operations = workload.operations();
  run->stats = fs->Stats();
  run->owners = std::move(workload.owners());
  run->device->PowerOff();
  fs.reset();
  return run;
}

// Checks every power-loss mode's image of `run`; appends failures.
void CheckRun(Run* run, uint64_t cut, bool all_modes, SweepCounts* counts, const char* test) {
  if (run->stats.log_compactions > 0) counts->runs_compacted += 1;
  if (run->stats.cleaner_segments > 0) counts->runs_cleaned += 1;
  std::vector<std::pair<std::string, PowerLoss>> modes;
  modes.emplace_back("drop-unsynced", PowerLoss::DropUnsynced());
  const long seeds = std::max<long>(1, EnvInt("CKPTFS_CRASH_SWEEP_SEEDS", 1));
  for (long i = 0; i < seeds; ++i) {
    const uint64_t seed = cut + static_cast<uint64_t>(i) * 1000003;
    modes.emplace_back("random(seed=" + std::to_string(seed) + ")", PowerLoss::Random(seed));
  }
  if (all_modes) modes.emplace_back("keep-unsynced", PowerLoss::KeepUnsynced());
  for (const auto& [name, how] : modes) {
    PowerLossReport report;
    MemoryDevice* image = &Pool().image;
    Status s = run->device->PowerLossImageInto(how, image, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
    counts->images += 1;
    counts->unsynced_writes += report.unsynced;
    counts->kept += report.kept;
    counts->dropped += report.dropped;
    counts->torn += report.torn;
    std::string err = VerifyImage(image, run->model.get(), run->owners, counts);
    if (!err.empty()) {
      counts->failures.push_back(
          "cut after write " + std::to_string(cut) + ", mode " + name + " (" +
          std::to_string(report.unsynced) + " unsynced: " + std::to_string(report.kept) +
          " kept, " + std::to_string(report.dropped) + " dropped, " +
          std::to_string(report.torn) + " torn; workload stopped with: " +
          (run->status.ok() ? std::string("OK") : run->status.ToString()) + "): " + err +
          "\n    reproduce: CKPTFS_CRASH_SWEEP_ONLY=" + std::to_string(cut) +
          " ./build-fi/bin/fs_tests --gtest_filter='" + test + "'");
    }
  }
}

class CrashSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    level_ = spdlog::get_level();
    // Every cut point makes the dying mount log its failed commits; only a
    // critical message (an invariant broken inside the core) is of interest.
    spdlog::set_level(spdlog::level::critical);
  }
  void TearDown() override { spdlog::set_level(level_); }

  void Sweep(const WorkloadConfig& config, int default_points, const char* test) {
    const auto t0 = std::chrono::steady_clock::now();
    SweepCounts counts;
    auto reference = RunWorkload(config, [](FaultInjectingDevice&) {});
    ASSERT_TRUE(reference->status.ok())
        << "the workload fails with no fault: " << reference->status.ToString() << " (after "
        << reference->operations << " operations; segments " << reference->stats.segments_free
        << " free, " << reference->stats.segments_data << " data, "
        << reference->stats.segments_meta << " meta of " << reference->stats.segments_total
        << "; live " << reference->stats.live_bytes << " bytes; cleaner moved "
        << reference->stats.cleaner_bytes_moved << " bytes from "
        << reference->stats.cleaner_segments << " segments)";
    const uint64_t total = reference->writes;
    ASSERT_GT(total, 20u);
    // With no cut the final image must hold everything.
    CheckRun(reference.get(), total + 1, true, &counts, test);
    const uint64_t operations = reference->operations;
    const StoreStats stats = reference->stats;
    reference.reset();

    const long only = EnvInt("CKPTFS_CRASH_SWEEP_ONLY", 0);
    long stride = EnvInt("CKPTFS_CRASH_SWEEP_STRIDE", 0);
    const long points = EnvInt("CKPTFS_CRASH_SWEEP_POINTS", 0);
    if (points > 0) default_points = static_cast<int>(std::min<long>(points, default_points));
    if (stride <= 0) stride = std::max<long>(1, (total + default_points - 1) / default_points);
    std::vector<uint64_t> cuts;
    if (only > 0) {
      cuts.push_back(static_cast<uint64_t>(only));
    } else {
      for (uint64_t k = 1; k <= total + 1; k += stride) cuts.push_back(k);
      if (cuts.back() != total) cuts.push_back(total);  // the last write of the burst
    }
    for (uint64_t k : cuts) {
      auto run = RunWorkload(config, [k](FaultInjectingDevice& d) { d.StopAfterWrites(k); });
      counts.cut_points += 1;
      CheckRun(run.get(), k, only > 0 || k % 4 == 0, &counts, test);
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ crash sweep ] %s: the burst makes %llu device writes (%llu operations, "
                "%.1f MiB written, %llu data segments written of %llu in the store, %llu "
                "commits, %llu log compactions, %llu segments cleaned, %.1f MiB moved by the "
                "cleaner); stride %ld; %.1f s\n",
                test, (unsigned long long)total, (unsigned long long)operations,
                stats.bytes_written / 1048576.0, (unsigned long long)stats.segments_written,
                static_cast<unsigned long long>(stats.segments_total), (unsigned long long)stats.commits,
                (unsigned long long)stats.log_compactions,
                (unsigned long long)stats.cleaner_segments, stats.cleaner_bytes_moved / 1048576.0,
                stride, secs);
    counts.Print(test);
    for (size_t i = 0; i < counts.failures.size() && i < 10; ++i) {
      ADD_FAILURE() << counts.failures[i];
    }
    EXPECT_TRUE(counts.failures.empty()) << counts.failures.size() << " failing image(s)";
  }

  spdlog::level::level_enum level_ = spdlog::level::info;
};

TEST_F(CrashSweep, SequentialRanksEveryCutPoint) {
  WorkloadConfig config;
  Sweep(config, kDefaultCutPoints, "CrashSweep.SequentialRanksEveryCutPoint");
}

// The same sweeps with every write compressed by the compressor threads:
// records of compressed writes are logged in their place, so a recovered
// store is still a prefix of the operations.
TEST_F(CrashSweep, SequentialRanksCompressedEveryCutPoint) {
  WorkloadConfig config;
  config.compress = "zstd:1";
  Sweep(config, kDefaultCutPoints / 2, "CrashSweep.SequentialRanksCompressedEveryCutPoint");
}

TEST_F(CrashSweep, ThreadedRanksCompressedEveryCutPoint) {
  WorkloadConfig config;
  config.threaded = true;
  config.compress = "zstd:1";
  Sweep(config, kDefaultThreadedCutPoints, "CrashSweep.ThreadedRanksCompressedEveryCutPoint");
}

TEST_F(CrashSweep, ThreadedRanksEveryCutPoint) {
  WorkloadConfig config;
  config.threaded = true;
  Sweep(config, kDefaultThreadedCutPoints, "CrashSweep.ThreadedRanksEveryCutPoint");
}

// A device write that fails (EIO, or ENOSPC from a thin-provisioned device)
// makes an operation return an error instead of crashing, the store refuses
// further changes, and after a reboot it is consistent and writable.
TEST_F(CrashSweep, FailedWriteIsAnErrorAndTheStoreSurvivesReboot) {
  WorkloadConfig config;
  config.steps = 2;
  auto reference = RunWorkload(config, [](FaultInjectingDevice&) {});
  ASSERT_TRUE(reference->status.ok()) << reference->status.ToString();
  const uint64_t total = reference->writes;
  reference.reset();
  SweepCounts counts;
  for (int err : {EIO, ENOSPC}) {
    for (uint64_t n : {uint64_t{1}, total / 5, total / 2, total * 4 / 5, total}) {
      auto run = RunWorkload(config, [n, err](FaultInjectingDevice& d) { d.FailWrite(n, err); });
      EXPECT_FALSE(run->status.ok()) << "write " << n << " failed with errno " << err
                                     << " but the workload saw no error";
      if (!run->status.ok()) {
        EXPECT_TRUE(err == ENOSPC ? run->status.IsNoSpace() || run->status.IsIOError()
                                  : run->status.IsIOError())
            << run->status.ToString();
      }
      counts.cut_points += 1;
      // The device kept working after the failure: reboot with everything it
      // holds, and with the unsynced tail lost.
      CheckRun(run.get(), n, true, &counts,
               "CrashSweep.FailedWriteIsAnErrorAndTheStoreSurvivesReboot");
    }
  }
  counts.Print("FailedWrite");
  for (size_t i = 0; i < counts.failures.size() && i < 10; ++i) ADD_FAILURE() << counts.failures[i];
}

// A torn write (a prefix of it reaches the media, then the power goes) at a
// spread of points: the torn prefix is kept (keep-unsynced) or not.
TEST_F(CrashSweep, TornWriteAtSpreadOfPoints) {
  WorkloadConfig config;
  config.steps = 2;
  auto reference = RunWorkload(config, [](FaultInjectingDevice&) {});
  ASSERT_TRUE(reference->status.ok()) << reference->status.ToString();
  const uint64_t total = reference->writes;
  reference.reset();
  SweepCounts counts;
  for (uint64_t i = 1; i <= 12; ++i) {
    const uint64_t n = std::max<uint64_t>(1, total * i / 12);
    auto run = RunWorkload(config, [n, i](FaultInjectingDevice& d) {
      d.TearWrite(n, (i % 4) * 4096 + 100);
    });
    counts.cut_points += 1;
    CheckRun(run.get(), n, true, &counts, "CrashSweep.TornWriteAtSpreadOfPoints");
  }
  counts.Print("TornWrite");
  for (size_t i = 0; i < counts.failures.size() && i < 10; ++i) ADD_FAILURE() << counts.failures[i];
}

// Two power cuts: the burst is cut, the store remounted and the burst
// resumed on it (new steps, retention, "latest" replaced), and that is cut
// too, so the second mount's log continues after a torn or dropped tail of
// the first and its own tail lands in space the first may have left dirty.
TEST_F(CrashSweep, SecondCrashAfterResumingOnARecoveredStore) {
  WorkloadConfig first;
  first.steps = 3;
  WorkloadConfig second;
  second.first_step = 4;
  second.steps = 5;
  auto reference = RunWorkload(first, [](FaultInjectingDevice&) {});
  ASSERT_TRUE(reference->status.ok()) << reference->status.ToString();
  const uint64_t total = reference->writes;
  reference.reset();
  SweepCounts counts;
  const char* test = "CrashSweep.SecondCrashAfterResumingOnARecoveredStore";
  for (uint64_t i = 1; i <= 8; ++i) {
    const uint64_t k = total * i / 9;
    auto run = RunWorkload(first, [k](FaultInjectingDevice& d) { d.StopAfterWrites(k); });
    // Recover the first cut (random loss) without the probe, as the state to resume from.
    Pool().resume = std::make_unique<MemoryDevice>(kStoreSize);
    ASSERT_TRUE(run->device->PowerLossImageInto(PowerLoss::Random(k), Pool().resume.get()).ok());
    std::vector<size_t> matched;
    std::string err = VerifyImage(Pool().resume.get(), run->model.get(), run->owners, &counts,
                                  &matched, /*probe=*/false);
    ASSERT_EQ(err, "") << "first cut after write " << k;
    Owner state = run->owners[0];
    state.live = state.history[matched[0]];
    std::shared_ptr<Model> model = run->model;
    run.reset();

    auto again = RunWorkload(second, [](FaultInjectingDevice&) {}, model, &state);
    // A cut in phase one's retention leaves two steps behind; in a small
    // store (CKPTFS_CRASH_SWEEP_STORE_MIB) two more may then truly not fit.
    if (again->status.IsNoSpace()) continue;
    ASSERT_TRUE(again->status.ok()) << again->status.ToString();
    const uint64_t total2 = again->writes;
    again.reset();
    for (uint64_t j = 1; j <= 4; ++j) {
      const uint64_t k2 = std::max<uint64_t>(1, total2 * j / 5 + i);
      auto cut = RunWorkload(second, [k2](FaultInjectingDevice& d) { d.StopAfterWrites(k2); },
                             model, &state);
      counts.cut_points += 1;
      CheckRun(cut.get(), k2, true, &counts, test);
      if (!counts.failures.empty() &&
          counts.failures.back().find("reproduce") != std::string::npos &&
          counts.failures.back().find("first cut") == std::string::npos) {
        counts.failures.back() = "first cut after write " + std::to_string(k) +
                                 " (random seed " + std::to_string(k) + "), second " +
                                 counts.failures.back();
      }
    }
  }
  Pool().resume.reset();
  counts.Print("SecondCrash");
  for (size_t i = 0; i < counts.failures.size() && i < 10; ++i) ADD_FAILURE() << counts.failures[i];
}

// The checker has teeth: a flipped byte in stored data is reported as a read
// error, and a state that the last OK Sync does not explain is reported as
// lost fsynced data.
TEST_F(CrashSweep, CheckerCatchesCorruptionAndLostSyncs) {
  WorkloadConfig config;
  config.steps = 2;
  SweepCounts counts;
  {
    auto run = RunWorkload(config, [](FaultInjectingDevice&) {});
    ASSERT_TRUE(run->status.ok()) << run->status.ToString();
    MemoryDevice* image = &Pool().image;
    ASSERT_TRUE(run->device->PowerLossImageInto(PowerLoss::DropUnsynced(), image).ok());
    EXPECT_EQ(VerifyImage(image, run->model.get(), run->owners, &counts), "");
    // One byte in every data block of every segment but the log's first.
    ASSERT_TRUE(run->device->PowerLossImageInto(PowerLoss::DropUnsynced(), image).ok());
    for (uint64_t off = (1 << 20) + kSegmentSize; off < kStoreSize; off += kBlockSize) {
      image->bytes()[off + 100] ^= 0x5a;
    }
    std::string err = VerifyImage(image, run->model.get(), run->owners, &counts);
    EXPECT_NE(err.find("Corruption"), std::string::npos) << err;
  }
  {
    // Cut in the middle; then claim the operations after the last OK Sync
    // were synced too. Dropping the unsynced writes loses them.
    auto reference = RunWorkload(config, [](FaultInjectingDevice&) {});
    const uint64_t total = reference->writes;
    reference.reset();
    int caught = 0;
    for (uint64_t k = total / 3; k < total && caught < 3; ++k) {
      auto run = RunWorkload(config, [k](FaultInjectingDevice& d) { d.StopAfterWrites(k); });
      Owner& owner = run->owners[0];
      if (owner.history.size() < 2 || owner.history.front() == owner.history.back()) continue;
      owner.Synced();  // a lie: pretend the last operations were fsynced
      MemoryDevice* image = &Pool().image;
      ASSERT_TRUE(run->device->PowerLossImageInto(PowerLoss::DropUnsynced(), image).ok());
      std::string err = VerifyImage(image, run->model.get(), run->owners, &counts);
      if (err.empty()) continue;  // the cut fell after the log write: nothing lost
      EXPECT_NE(err.find("no prefix"), std::string::npos) << err;
      ++caught;
    }
    EXPECT_EQ(caught, 3);
  }
}

}  // namespace
}  // namespace ckptfs
