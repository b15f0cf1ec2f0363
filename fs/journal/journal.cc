// Journal implementation: apply, commit, compaction and the committer.
#include "journal/journal.h"

#include <spdlog/spdlog.h>

#include "journal/replay.h"
#include "meta/snapshot.h"

namespace ckptfs {
namespace {

// Pending records past this wake the committer: a burst without fsync
// still reaches the log in bounded pieces.
constexpr size_t kCommitAtPendingBytes = 4 << 20;

}  // namespace

Journal::Journal(const MountOptions& options, BlockDevice* device, const Superblock& sb,
                 SegmentTable* segments, DataLog* data)
    : options_(options),
      device_(device),
      sb_(sb),
      segments_(segments),
      data_(data),
      head_sb_(sb),
      ns_(segments) {}

Journal::~Journal() { Stop(); }

Status Journal::Recover() {
  MutexLock commit_lock(&commit_mu_);
  WriterLock lock(&mu_);
  CKPTFS_ASSIGN_OR_RETURN(LogReplayResult replay,
                          ReplayStore(device_, sb_, &ns_, segments_));
  if (!replay.damage.empty()) {
    // Mounting would silently drop committed changes; make the user look.
    return Status::Corruption(replay.damage + "; run ckptfs-fsck for a full report");
  }
  spdlog::info("replayed {} log records in {} blocks over {} segment(s); log ends: {}",
               replay.records, replay.blocks, replay.segments.size(), replay.stop_reason);
  const Inode* root = ns_.Find(kRootIno);
  if (!root || !root->is_dir()) return Status::Corruption("store has no root directory");
  log_segments_ = replay.segments;
  log_bytes_at_open_ = replay.bytes;
  committed_lsn_.store(replay.end.lsn - 1);

  // Inodes left with no name by a crash (unlinked while open) are freed now.
  std::vector<uint64_t> orphans;
  for (const auto& [ino, node] : ns_.inodes()) {
    if (node->nlink == 0 && ino != kRootIno) orphans.push_back(ino);
  }
  if (options_.read_only) {
    // Freeing them would take a record. No name reaches them, so they cost
    // a read-only mount nothing but the space they hold.
    if (!orphans.empty()) {
      spdlog::info("read-only: left {} orphaned inode(s) for a read-write mount to free",
                   orphans.size());
    }
    return Status::Ok();
  }
  log_writer_ = MakeLogWriter(replay.end, &log_segments_);
  for (uint64_t ino : orphans) CKPTFS_RETURN_IF_ERROR(Apply(record::FreeInode{ino}));
  if (!orphans.empty()) spdlog::info("freed {} orphaned inode(s)", orphans.size());
  return Status::Ok();
}

void Journal::WithCommittedLog(const CommittedLogFn& fn) {
  MutexLock commit_lock(&commit_mu_);
  const LogPosition end = log_writer_ ? log_writer_->position() : LogPosition{};
  fn(head_sb_, log_segments_, end, committed_lsn_.load());
}

void Journal::Start() {
  if (options_.read_only) return;
  committer_.Start(std::chrono::milliseconds(options_.commit_interval_ms), [this] {
    Status s = CommitNow();
    if (!s.ok()) spdlog::error("background commit failed: {}", s.ToString());
  });
}

Status Journal::CheckWritable() const {
  if (options_.read_only) return Status::ReadOnly("store is opened read-only");
  if (failure_.failed()) {
    return Status::IOError("store is read-only after a failed commit: " +
                           failure_.Get().message());
  }
  return Status::Ok();
}

Status Journal::Fail(const Status& s) {
  if (failure_.Set(s)) spdlog::error("store is now read-only: {}", s.ToString());
  return s;
}

Status Journal::Apply(const Record& r) {
  CKPTFS_RETURN_IF_ERROR(CheckWritable());
  // Segments this record empties may be reused once it is durable.
  segments_->NoteRecord(pending_log_.next_seq());
  Status s = ns_.Apply(r);
  if (!s.ok()) {
    // Live operations validate before they apply; reaching here is a bug.
    spdlog::critical("record failed to apply to a validated state: {}", s.ToString());
    return s;
  }
  pending_log_.Append(r);
  if (pending_log_.ready_bytes() >= kCommitAtPendingBytes) committer_.Wake();
  return Status::Ok();
}

Status Journal::Reserve(uint64_t key, const record::WriteExtent& in_memory) {
  CKPTFS_RETURN_IF_ERROR(CheckWritable());
  // The record keeps its place in the log: what it releases dies by it.
  segments_->NoteRecord(pending_log_.Reserve(key));
  Status s = ns_.Apply(in_memory);
  if (!s.ok()) pending_log_.Fill(key, {});
  return s;
}

void Journal::Unreserve(uint64_t key) { pending_log_.Fill(key, {}); }

Status Journal::Fill(uint64_t key, const record::WriteExtent& as_written, uint64_t pending_addr) {
  auto seq = pending_log_.ReservedSeq(key);
  if (!seq) return Status::IOError("no log place reserved for pending run " + std::to_string(key));
  // The record is the write as it happened, in its place in the log: replay
  // then applies whatever came after it (overwrites, truncates, unlink) as
  // the namespace did.
  std::string encoded;
  EncodeRecord(as_written, &encoded);
  pending_log_.Fill(key, std::move(encoded));
  // In memory only what still maps the run moves to the stored copy; the
  // stored run gains references and nothing dies, but any change is the
  // place's own.
  segments_->NoteRecord(*seq);
  const Inode* node = ns_.Find(as_written.ino);
  if (!node || !node->is_regular()) return Status::Ok();
  for (const ExtentPiece& p : node->extents.Lookup(as_written.offset, as_written.length)) {
    if (p.hole || p.phys.addr != pending_addr) continue;
    CKPTFS_RETURN_IF_ERROR(ns_.Apply(record::WriteExtent{as_written.ino, p.offset,
                                                         static_cast<uint32_t>(p.length),
                                                         as_written.phys, p.skip, 0}));
  }
  return Status::Ok();
}

std::unique_ptr<LogWriter> Journal::MakeLogWriter(LogPosition at, std::vector<uint32_t>* chain) {
  return std::make_unique<LogWriter>(device_, sb_, at, [this, chain]() -> Result<uint32_t> {
    CKPTFS_ASSIGN_OR_RETURN(uint32_t s, segments_->AllocateMeta());
    chain->push_back(s);
    return s;
  });
}

Status Journal::AppendToLogLocked(const std::string& batch) {
  if (batch.empty()) return Status::Ok();
  const uint64_t before = log_writer_->bytes_written();
  Status s = log_writer_->Append(batch);
  metadata_bytes_.fetch_add(log_writer_->bytes_written() - before);
  if (s.ok()) s = device_->Flush();
  return s;
}

void Journal::MarkDurable(uint64_t seq) {
  segments_->CommitDurable(seq);
  durable_seq_.store(seq);
  committed_lsn_.store(log_writer_->position().lsn - 1);
}

bool Journal::LogNeedsCompaction() const {
  const uint64_t bytes = log_bytes_at_open_ + log_writer_->bytes_written();
  return bytes >= options_.compact_log_bytes && bytes >= 4 * last_snapshot_bytes_;
}

Status Journal::CompactLogLocked() {
  if (Status failed = failure_.Get(); !failed.ok()) return failed;
  std::string snapshot;
  std::string batch;
  uint64_t seq;
  {
    // The snapshot covers every applied change, so the pending records are
    // not written after it; they are kept only in case the snapshot cannot
    // be written and the old chain has to take them after all.
    WriterLock lock(&mu_);
    // Writes waiting for a compressor have no record yet, so a snapshot
    // would capture their file sizes without their data; compact later.
    if (pending_log_.has_reserved()) return Status::Ok();
    EncodeSnapshot(ns_, &snapshot);
    seq = pending_log_.TakeReady(&batch);
  }
  Status s = data_->Sync();  // the snapshot points at all data written so far
  if (!s.ok()) return Fail(s);
  const LogPosition old_end = log_writer_->position();
  std::vector<uint32_t> chain;
  // No room for a new chain: commit to the old one, which is still whole.
  auto keep_old_chain = [&](const Status& why) REQUIRES(commit_mu_) -> Status {
    spdlog::warn("metadata log compaction skipped: {}", why.ToString());
    segments_->FreeMeta(chain);
    Status c = AppendToLogLocked(batch);
    if (!c.ok()) return Fail(c);
    MarkDurable(seq);
    last_snapshot_bytes_ = snapshot.size();  // do not retry at once
    return Status::Ok();
  };
  auto head = segments_->AllocateMeta();
  if (!head.ok()) return keep_old_chain(head.status());
  chain.push_back(*head);
  // The new chain continues the lsn sequence, so no block of an older chain
  // can ever pass for one of its blocks.
  LogPosition start{*head, 0, old_end.lsn, old_end.prev_crc};
  auto writer = MakeLogWriter(start, &chain);
  s = writer->Append(snapshot);
  metadata_bytes_.fetch_add(writer->bytes_written());
  if (s.IsNoSpace()) return keep_old_chain(s);
  if (s.ok()) s = device_->Flush();
  Superblock next = head_sb_;
  next.generation += 1;
  next.log_head_segment = start.segment;
  next.log_head_lsn = start.lsn;
  next.log_head_prev_crc = start.prev_crc;
  if (s.ok()) s = WriteSuperblock(device_, next);
  if (!s.ok()) return Fail(s);
  // From here on a mount reads the new chain; the old one is free space.
  head_sb_ = next;
  segments_->FreeMeta(log_segments_);
  spdlog::info("compacted the metadata log: {} bytes in {} segment(s) became a {}-byte snapshot",
               log_bytes_at_open_ + log_writer_->bytes_written(), log_segments_.size(),
               writer->bytes_written());
  log_segments_ = std::move(chain);
  // A writer whose allocator records into the member chain (the local one
  // is gone when this returns), resuming after the snapshot.
  log_writer_ = MakeLogWriter(writer->position(), &log_segments_);
  log_bytes_at_open_ = writer->bytes_written();
  last_snapshot_bytes_ = writer->bytes_written();
  MarkDurable(seq);
  compactions_.fetch_add(1);
  return Status::Ok();
}

Status Journal::CommitLocked() {
  if (Status failed = failure_.Get(); !failed.ok()) return failed;
  std::string batch;
  uint64_t seq;
  {
    // Up to the first write still waiting for its compressor: the log only
    // ever holds a prefix of what happened.
    WriterLock lock(&mu_);
    seq = pending_log_.TakeReady(&batch);
  }
  Status s = data_->Sync();
  if (s.ok()) s = AppendToLogLocked(batch);
  if (!s.ok()) return Fail(s);
  MarkDurable(seq);
  commits_.fetch_add(1);
  if (LogNeedsCompaction()) return CompactLogLocked();
  return Status::Ok();
}

Status Journal::CommitNow() {
  if (options_.read_only) return Status::Ok();
  uint64_t target;
  {
    ReaderLock lock(&mu_);
    // What a commit could reach now: nothing past a write still waiting
    // for its compressor.
    target = pending_log_.ready_seq();
  }
  MutexLock commit_lock(&commit_mu_);
  if (durable_seq_.load() >= target && !failure_.failed() && segments_->PendingFree() == 0) {
    // Records are durable, but data appended with no record yet (in flight)
    // needs nothing: its record will follow in a later commit. Segments
    // waiting to be freed do need one, even an empty one, or a write
    // looking for space would find none.
    return Status::Ok();
  }
  return CommitLocked();
}

Status Journal::Commit() {
  MutexLock commit_lock(&commit_mu_);
  // Read-only, or Recover failed: there is no log to commit to.
  if (!log_writer_) return Status::Ok();
  return CommitLocked();
}

JournalStats Journal::stats() const {
  return JournalStats{commits_.load(), compactions_.load(), metadata_bytes_.load()};
}

}  // namespace ckptfs
