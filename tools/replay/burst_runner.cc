// The checkpoint's clock runs inside the rank threads (mkdir, open, writes,
// fsync, close) so directory creation is billed to the checkpoint, as in DLIO;
// retention deletes and cache drops happen between phases and are noted apart.
#include "burst_runner.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <optional>

#include "appender.h"
#include "file_io.h"
#include "page_cache.h"
#include "progress.h"
#include "rank_threads.h"
#include "torch_save_layout.h"

namespace ckptfs::replay {
namespace {

// Calls `fn(offset, length)` for each write of a file: one per torch.save
// record, split where a record exceeds max_write.
template <typename Fn>
Status ForEachChunk(const PlannedFile& file, uint64_t max_write, Fn&& fn) {
  const TorchSaveLayout layout(file.tensor_bytes);
        for (const WriteSegment& segment : layout.segments()) {
    uint64_t end = segment.offset + segment.length;
    for (uint64_t at = segment.offset; at < end; at += max_write) {
      CKPTFS_RETURN_IF_ERROR(fn(at, std::min(max_write, end - at)));
    }
  }
  return Status::Ok();
}

uint64_t LargestChunk(const RankPlan& plan, uint64_t max_write) {
  uint64_t largest = 0;
  for (const PlannedFile& file : plan.files) {
    const TorchSaveLayout layout(file.tensor_bytes);
        for (const WriteSegment& segment : layout.segments()) {
      largest = std::max(largest, std::min(segment.length, max_write));
    }
  }
  return largest;
}

// Deletes the files of `plan`'s ranks, then the checkpoint's directory. With
// `shared_directory` (a run of some of the ranks, whose directory other ranks
// may be writing into too) a directory that still holds their files stays.
Status DeleteCheckpoint(const CheckpointPlan& plan, const std::string& dir, bool shared_directory) {
  for (const RankPlan& rank : plan.ranks) {
    for (const PlannedFile& file : rank.files) {
      Status st = RemoveFile(JoinPath(dir, file.relative_path));
      if (!st.ok() && !st.IsNotFound()) return st;
    }
  }
  if (plan.directory.empty()) return Status::Ok();
  Status st = RemoveEmptyDirectory(JoinPath(dir, plan.directory));
  if (shared_directory && st.code() == Status::Code::kNotEmpty) return Status::Ok();
  return st;
}

std::string CheckpointLabel(CheckpointId id) {
  return "epoch " + std::to_string(id.epoch) + " step " + std::to_string(id.step);
}

// Thread i of `outcome` ran plan.ranks[i].
PhaseResult Summarize(std::string kind, std::string label, const CheckpointPlan& plan,
                      const RanksOutcome& outcome) {
  PhaseResult phase;
  phase.kind = std::move(kind);
  phase.label = std::move(label);
  phase.seconds = outcome.seconds;
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    const RankPlan& rank = plan.ranks[i];
    RankResult r;
    r.rank = rank.rank;
    r.bytes = rank.FileBytes();
    r.files = rank.files.size();
    r.seconds = outcome.ranks[i].seconds;
    phase.bytes += r.bytes;
    phase.files += r.files;
    phase.ranks.push_back(r);
  }
  return phase;
}

class Burst {
 public:
  Burst(const WorkloadSpec& spec, const BurstOptions& options)
      : spec_(spec), options_(options), ranks_(options.ranks.value_or(AllRanks(spec.layout.WorldSize()))) {
    io_.dir = options.dir;
    io_.payload = spec.payload;
    io_.fsync = spec.fsync;
    io_.max_write = options.max_write;
    io_.restore_mode = options.restore_mode;
    buffers_.resize(ranks_.Count());
  }

  Result<std::vector<PhaseResult>> Run() {
    CKPTFS_RETURN_IF_ERROR(MakeDirectories(options_.dir));
    std::vector<CheckpointId> schedule = CheckpointSchedule(options_.checkpoints, options_.passes);
    if (options_.restore_only) {
      for (CheckpointId id : schedule) {
        CKPTFS_ASSIGN_OR_RETURN(CheckpointPlan plan, BuildCheckpointPlan(spec_, id, ranks_));
        CKPTFS_ASSIGN_OR_RETURN(PhaseResult phase, Restore(plan, id));
        results_.push_back(std::move(phase));
      }
      return std::move(results_);
    }
    std::optional<Appender> appender;
    const bool keeps_log = ranks_.Contains(0);
    if (options_.appender_bytes_per_s > 0 && keeps_log) {
      appender.emplace(JoinPath(options_.dir, "train.log"), options_.appender_bytes_per_s);
    }
    for (size_t start = 0; start < schedule.size(); start += options_.checkpoints) {
      std::vector<CheckpointPlan> this_pass;
      std::vector<CheckpointId> pass_ids;
      for (size_t i = start; i < start + options_.checkpoints; ++i) {
        CKPTFS_ASSIGN_OR_RETURN(CheckpointPlan plan, BuildCheckpointPlan(spec_, schedule[i], ranks_));
        std::vector<std::string> notes;
        const int ordinal = static_cast<int>(i) + 1;
        CKPTFS_RETURN_IF_ERROR(ApplyRetention(ordinal, notes));
        CKPTFS_ASSIGN_OR_RETURN(PhaseResult phase, Write(plan, schedule[i]));
        phase.notes.insert(phase.notes.begin(), notes.begin(), notes.end());
        results_.push_back(std::move(phase));
        on_disk_.push_back({schedule[i], plan, ordinal});
        this_pass.push_back(std::move(plan));
        pass_ids.push_back(schedule[i]);
      }
      if (options_.restore) {
        for (size_t i = 0; i < this_pass.size(); ++i) {
          if (!StillOnDisk(pass_ids[i])) continue;  // retention already removed it
          CKPTFS_ASSIGN_OR_RETURN(PhaseResult phase, Restore(this_pass[i], pass_ids[i]));
          results_.push_back(std::move(phase));
        }
      }
    }
    if (appender) {
      CKPTFS_RETURN_IF_ERROR(appender->Stop());
      if (!results_.empty()) {
        results_.back().notes.push_back("appender: " + std::to_string(appender->bytes_written()) +
                                        " bytes to train.log over the run");
      }
    } else if (options_.appender_bytes_per_s > 0 && !results_.empty()) {
      results_.back().notes.push_back("appender: not run: train.log is rank 0's, and this run has ranks " +
                                      FormatRankRange(ranks_));
    }
    return std::move(results_);
  }

 private:
  // Before checkpoint number `next` (1-based, across passes) is written,
  // deletes every checkpoint that will not be among the last --keep once it
  // is, unless it is a milestone (--keep-every).
  Status ApplyRetention(int next, std::vector<std::string>& notes) {
    if (options_.keep <= 0) return Status::Ok();
    for (auto it = on_disk_.begin(); it != on_disk_.end();) {
      const bool milestone = options_.keep_every > 0 && it->ordinal % options_.keep_every == 0;
      if (milestone || it->ordinal > next - options_.keep) {
        ++it;
        continue;
      }
      auto begin = std::chrono::steady_clock::now();
      const bool shared_directory = ranks_ != AllRanks(spec_.layout.WorldSize());
      CKPTFS_RETURN_IF_ERROR(DeleteCheckpoint(it->plan, options_.dir, shared_directory));
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      char note[128];
      std::snprintf(note, sizeof note, "retention: deleted %s in %.3f s", CheckpointLabel(it->id).c_str(), seconds);
      notes.push_back(note);
      it = on_disk_.erase(it);
    }
    return Status::Ok();
  }

  bool StillOnDisk(CheckpointId id) const {
    for (const StoredCheckpoint& kept : on_disk_) {
      if (kept.id.epoch == id.epoch && kept.id.step == id.step) return true;
    }
    return false;
  }

  // Sizes every rank's buffer for `plan` before a phase's clock starts. The
  // vector zeroes what it adds, so its pages are touched here: a trainer's
  // tensors are in memory before torch.save and torch.load's storage is its
  // own. Touched inside the phase, the first-touch page faults of 8 ranks'
  // buffers (up to --max-write each) were a quarter of ckpt-replay's CPU in
  // a restore on a 2-core VM: the reader's memory timed, not the filesystem.
  void SizeBuffers(const CheckpointPlan& plan, bool for_restore) {
    if (for_restore && io_.restore_mode == RestoreMode::kMmap) return;  // reads the mapping itself
    for (size_t i = 0; i < plan.ranks.size(); ++i) {
      const uint64_t largest = LargestChunk(plan.ranks[i], io_.max_write);
      buffers_[i].resize(std::max<uint64_t>(buffers_[i].size(), largest));
    }
  }

  Result<PhaseResult> Write(const CheckpointPlan& plan, CheckpointId id) {
    SizeBuffers(plan, /*for_restore=*/false);
    ProgressBar progress("write " + CheckpointLabel(id), plan.FileBytes(), options_.progress);
    RanksOutcome outcome = RunRanksConcurrently(plan.ranks.size(), [&](int rank) {
      return WriteRankFiles(plan.ranks[rank], io_, buffers_[rank], [&](uint64_t n) { progress.Add(n); });
    });
    CKPTFS_RETURN_IF_ERROR(outcome.FirstError(ranks_.first));
    return Summarize("write", CheckpointLabel(id), plan, outcome);
  }

  Result<PhaseResult> Restore(const CheckpointPlan& plan, CheckpointId id) {
    std::optional<std::string> cache_note;
    if (options_.drop_caches) {
      if (Status st = DropPageCache(); !st.ok()) cache_note = "page cache not dropped: " + st.ToString();
    } else {
      cache_note = "page cache not dropped (--no-drop-caches)";
    }
    SizeBuffers(plan, /*for_restore=*/true);
    ProgressBar progress("restore " + CheckpointLabel(id), plan.FileBytes(), options_.progress);
    RanksOutcome outcome = RunRanksConcurrently(plan.ranks.size(), [&](int rank) {
      return VerifyRankFiles(plan.ranks[rank], io_, buffers_[rank], [&](uint64_t n) { progress.Add(n); });
    });
    CKPTFS_RETURN_IF_ERROR(outcome.FirstError(ranks_.first));
    PhaseResult phase = Summarize("restore", CheckpointLabel(id), plan, outcome);
    if (cache_note) phase.notes.push_back(*cache_note);
    if (options_.restore_mode == RestoreMode::kMmap) phase.notes.push_back("read through mmap");
    return phase;
  }

  const WorkloadSpec& spec_;
  const BurstOptions& options_;
  const RankRange ranks_;  // what this run plans, writes and reads; thread i runs rank first + i
  RankIo io_;
  std::vector<std::vector<std::byte>> buffers_;
  struct StoredCheckpoint {
    CheckpointId id;
    CheckpointPlan plan;
    int ordinal;  // 1-based, across passes: what --keep-every counts
  };
  std::deque<StoredCheckpoint> on_disk_;  // oldest first
  std::vector<PhaseResult> results_;
};

}  // namespace

Status WriteRankFiles(const RankPlan& plan, const RankIo& io, std::vector<std::byte>& buffer,
                      const std::function<void(uint64_t)>& on_bytes) {
  buffer.resize(std::max<uint64_t>(buffer.size(), LargestChunk(plan, io.max_write)));
  std::string made_directory;
  for (const PlannedFile& file : plan.files) {
    const std::string path = JoinPath(io.dir, file.relative_path);
    std::string parent = ParentDirectory(path);
    if (parent != made_directory) {
      CKPTFS_RETURN_IF_ERROR(MakeDirectories(parent));
      made_directory = parent;
    }
    CKPTFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, OpenMode::kCreateTruncate));
    PayloadPattern pattern(io.payload, FileSeed(file.relative_path));
    CKPTFS_RETURN_IF_ERROR(ForEachChunk(file, io.max_write, [&](uint64_t offset, uint64_t length) {
      std::span<std::byte> chunk(buffer.data(), length);
      pattern.Fill(offset, chunk);
      CKPTFS_RETURN_IF_ERROR(WriteAll(fd.get(), chunk, path));
      on_bytes(length);
      return Status::Ok();
    }));
    if (io.fsync) CKPTFS_RETURN_IF_ERROR(Fsync(fd.get(), path));
    CKPTFS_RETURN_IF_ERROR(fd.Close(path));
  }
  return Status::Ok();
}

Status VerifyRankFiles(const RankPlan& plan, const RankIo& io, std::vector<std::byte>& buffer,
                       const std::function<void(uint64_t)>& on_bytes) {
  const bool mapped = io.restore_mode == RestoreMode::kMmap;
  uint64_t largest = LargestChunk(plan, io.max_write);
  if (!mapped) buffer.resize(std::max<uint64_t>(buffer.size(), largest));
  for (const PlannedFile& file : plan.files) {
    const std::string path = JoinPath(io.dir, file.relative_path);
    CKPTFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, OpenMode::kRead));
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Status::IOError("fstat " + path, errno);
    if (static_cast<uint64_t>(st.st_size) != file.FileBytes()) {
      return Status::Corruption(path + ": size " + std::to_string(st.st_size) + ", expected " +
                                std::to_string(file.FileBytes()));
    }
    // A private read-only mapping of the whole file, no madvise: what
    // torch.load(mmap=True) does, so page faults and the kernel's own
    // readahead decide the I/O, not our read sizes.
    const std::byte* map = nullptr;
    if (mapped && st.st_size > 0) {
      void* addr = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
      if (addr == MAP_FAILED) return Status::IOError("mmap " + path, errno);
      map = static_cast<const std::byte*>(addr);
    }
    PayloadPattern pattern(io.payload, FileSeed(file.relative_path));
    Status checked = ForEachChunk(file, io.max_write, [&](uint64_t offset, uint64_t length) {
      std::span<const std::byte> chunk;
      if (mapped) {
        chunk = std::span<const std::byte>(map + offset, length);
      } else {
        std::span<std::byte> into(buffer.data(), length);
        CKPTFS_ASSIGN_OR_RETURN(size_t got, PreadFull(fd.get(), into, offset, path));
        if (got != length) {
          return Status::Corruption(path + ": short read at offset " + std::to_string(offset));
        }
        chunk = into;
      }
      if (std::optional<uint64_t> bad = pattern.FindMismatch(offset, chunk)) {
        return Status::Corruption(path + ": content mismatch at offset " + std::to_string(*bad));
      }
      on_bytes(length);
      return Status::Ok();
    });
    if (map != nullptr) ::munmap(const_cast<std::byte*>(map), static_cast<size_t>(st.st_size));
    CKPTFS_RETURN_IF_ERROR(checked);
    CKPTFS_RETURN_IF_ERROR(fd.Close(path));
  }
  return Status::Ok();
}

Result<RestoreMode> ParseRestoreMode(std::string_view name) {
  if (name == "read") return RestoreMode::kRead;
  if (name == "mmap") return RestoreMode::kMmap;
  return Status::Invalid("takes read|mmap, got '" + std::string(name) + "'");
}

Result<std::vector<PhaseResult>> RunBurst(const WorkloadSpec& spec, const BurstOptions& options) {
  CKPTFS_RETURN_IF_ERROR(ValidateSpec(spec));
  if (options.dir.empty()) return Status::Invalid("--dir is required");
  if (options.checkpoints < 1 || options.passes < 1) return Status::Invalid("checkpoints and passes must be >= 1");
  if (options.keep < 0) return Status::Invalid("--keep must be >= 0");
  if (options.keep_every < 0) return Status::Invalid("--keep-every must be >= 0");
  if (options.restore_only && options.appender_bytes_per_s > 0) {
    return Status::Invalid("--restore-only writes nothing: --appender-rate does not apply");
  }
  if (options.max_write == 0) return Status::Invalid("--max-write must be >= 1");
  if (options.restore_only && options.keep > 0) return Status::Invalid("--restore-only cannot apply --keep");
  if (options.ranks) {
    if (Status st = CheckRankRange(*options.ranks, spec.layout.WorldSize()); !st.ok()) {
      return Status::Invalid("--ranks: " + st.message());
    }
  }
  return Burst(spec, options).Run();
}

}  // namespace ckptfs::replay
