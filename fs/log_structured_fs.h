// LogStructuredFs: the FileSystem implementation that ties the parts
// together: the namespace (meta/), the metadata log (log/), the segment
// data log (segment/) and the device (io/).
//
// Locking, outermost first:
//   clean_mu_    one cleaning pass at a time
//   commit_mu_   one commit at a time (group commit: waiters re-check)
//   ns_mu_       the namespace and the pending log (PendingLog); shared for
//                lookups and reads, exclusive for every change, so the log
//                order is exactly the order changes were applied
//   reclaim_mu_  shared while a read uses extents it looked up; exclusive
//                while freed segments become reusable
//   DataLog, SegmentTable, PendingRuns internal mutexes
// The data log is written before the records that point into it, and both
// are flushed before fsync returns (see docs/design.md, "Commit").
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "ckptfs/filesystem.h"
#include "compress/extent_codec.h"
#include "format/superblock.h"
#include "io/block_device.h"
#include "log/log_writer.h"
#include "log/pending_log.h"
#include "meta/namespace.h"
#include "util/failure_state.h"
#include "segment/data_log.h"
#include "compress/pending_runs.h"
#include "segment/segment_table.h"

namespace ckptfs {

// A file's or directory's compression policy (CompressionPolicy text form);
// new files and directories inherit it from their parent.
inline constexpr const char* kCompressXattr = "user.ckptfs.compress";

class LogStructuredFs : public FileSystem {
 public:
  LogStructuredFs(const MountOptions& options, std::unique_ptr<BlockDevice> device,
                  const Superblock& sb);
  ~LogStructuredFs() override;

  // Replays the metadata log and readies the writers. Called once by Open.
  Status Recover();

  void Start() override;
  Status Close() override;

  Result<struct stat> Lookup(uint64_t parent, std::string_view name) override;
  void Forget(uint64_t ino, uint64_t count) override;
  Result<struct stat> GetAttr(uint64_t ino) override;
  Result<struct stat> SetAttr(uint64_t ino, const AttrChange& change) override;
  Result<struct stat> Create(uint64_t parent, std::string_view name, uint32_t mode, uint32_t uid,
                             uint32_t gid) override;
  Result<struct stat> Mknod(uint64_t parent, std::string_view name, uint32_t mode, uint64_t rdev,
                            uint32_t uid, uint32_t gid) override;
  Result<struct stat> Mkdir(uint64_t parent, std::string_view name, uint32_t mode, uint32_t uid,
                            uint32_t gid) override;
  Result<struct stat> Symlink(uint64_t parent, std::string_view name, std::string_view target,
                              uint32_t uid, uint32_t gid) override;
  Result<struct stat> Link(uint64_t ino, uint64_t new_parent, std::string_view name) override;
  Result<std::string> ReadLink(uint64_t ino) override;
  Status Unlink(uint64_t parent, std::string_view name) override;
  Status Rmdir(uint64_t parent, std::string_view name) override;
  Status Rename(uint64_t parent, std::string_view name, uint64_t new_parent,
                std::string_view new_name, uint32_t flags) override;
  Status OpenFile(uint64_t ino) override;
  void ReleaseFile(uint64_t ino) override;
  Result<size_t> Read(uint64_t ino, uint64_t offset, size_t size, char* buf) override;
  Status ReadInto(uint64_t ino, uint64_t offset, size_t size, ReadView* view) override;
  Result<size_t> Write(uint64_t ino, uint64_t offset, const char* data, size_t size,
                       SetIdDrop drop_setid = SetIdDrop::kNone) override;
  Status Sync() override;
  Status Fallocate(uint64_t ino, int mode, uint64_t offset, uint64_t length) override;
  Status ReadDir(uint64_t ino, uint64_t cookie, bool plus, const DirFiller& fill) override;
  Status SetXattr(uint64_t ino, std::string_view name, std::string_view value, int flags) override;
  Result<std::string> GetXattr(uint64_t ino, std::string_view name) override;
  Result<std::string> ListXattr(uint64_t ino) override;
  Status RemoveXattr(uint64_t ino, std::string_view name) override;
  struct statvfs StatFs() override;
  StoreStats Stats() override;

 private:
  // Applies `r` and queues it for the log. Requires ns_mu_ held exclusively.
  Status Mutate(const Record& r);
  // Creates an inode of `mode` named `name` in `parent`. Requires ns_mu_.
  Result<struct stat> CreateNode(uint64_t parent, std::string_view name, uint32_t mode,
                                 uint32_t uid, uint32_t gid, uint64_t rdev,
                                 std::string_view target);
  // Frees `node` if nothing names or references it. Requires ns_mu_ exclusive.
  Status FreeIfUnused(Inode* node);
  // What `drop` clears of `node` (its new mode, and whether the file
  // capability goes); nothing when it has nothing to clear.
  static bool NeedsSetIdDrop(const Inode& node, SetIdDrop drop);
  Status DropSetIdBits(uint64_t ino, SetIdDrop drop);  // requires ns_mu_ exclusive
  // Validates that `parent` is a live directory and `name` a legal new entry.
  Result<Inode*> WritableDir(uint64_t parent, std::string_view name);
  // Appends to the user stream, making room (commit, clean) when full.
  // `placing_pending`: a compressor placing a write it was promised room for.
  Result<DataLog::Ticket> AppendData(const char* data, size_t len, RunCoding coding = {},
                                     bool placing_pending = false);
  // Commits what is pending without waiting for compressor threads: what
  // making room needs (they may be the caller). Takes commit_mu_.
  Status CommitNow();
  // Commits all pending records (and the data they need). Requires commit_mu_.
  Status CommitLocked();
  // Rewrites the metadata log as a snapshot of the namespace in a new chain,
  // switches the superblock to it and frees the old chain. Requires commit_mu_.
  Status CompactLogLocked();
  bool LogNeedsCompaction() const;
  // Appends `batch` to the current chain and flushes. Requires commit_mu_.
  Status AppendToLogLocked(const std::string& batch);
  // A writer for a chain whose segments are recorded in `*chain`.
  std::unique_ptr<LogWriter> MakeLogWriter(LogPosition at, std::vector<uint32_t>* chain);
  // Records that a commit failed; the store is read-only from then on.
  Status Fail(const Status& s);
  void CommitterLoop();
  struct CleanResult {
    size_t segments = 0;  // victims emptied (free after the commit CleanOnce makes)
    uint64_t moved = 0;   // live bytes copied out of them
  };
  // Empties up to `max_victims` segments (fs/cleaning.cc). Takes clean_mu_,
  // then the namespace and commit locks.
  Result<CleanResult> CleanOnce(size_t max_victims);
  // compress_when=idle: rewrites up to `max_victims` segments holding mostly
  // raw data of compressing files, compressing it on the way. Takes
  // clean_mu_, then the namespace and commit locks.
  Result<CleanResult> RecompressOnce(size_t max_victims);
  // Moves every live byte out of `victims` to the cleaner's stream (with
  // `recompress`, raw data of compressing files is compressed) and commits.
  // Requires clean_mu_.
  Result<CleanResult> EvacuateLocked(const std::vector<uint32_t>& victims, bool recompress);
  // Bytes the cleaner may write now: free segments beyond the metadata
  // reserve and the room promised to queued writes, plus its open buffer.
  uint64_t CleanerRoom() const;
  bool SpaceIsLow() const;
  void CleanerLoop();
  // Compression (fs/compression.cc).
  // The policy for writes to `node`. Requires ns_mu_.
  CompressionPolicy PolicyFor(const Inode& node) const;
  // Hands one write of a compressing file to the compressor threads; false
  // when they are behind and the mount says not to wait for them.
  Result<bool> WritePending(uint64_t ino, uint64_t offset, const char* data, size_t len,
                            const CompressionPolicy& policy);
  void CompressorLoop();
  // Encodes `run`, appends it and points what still maps it at the copy.
  Status PlaceRun(const PendingRun& run, ExtentEncoder* encoder);
  // A new file or directory in `parent` inherits its compression xattr.
  // Requires ns_mu_ exclusive.
  Status InheritCompression(const Inode& parent, uint64_t child);
  struct stat StatOf(const Inode& node) const;
  // statfs figures given the inode count (read under ns_mu_ by the caller).
  struct statvfs StatFsFor(size_t inodes) const;
  Status CheckWritable() const;

  const MountOptions options_;
  const std::unique_ptr<BlockDevice> device_;
  const Superblock sb_;  // geometry and store id: never change
  Superblock head_sb_;  // commit_mu_: the superblock as last written (log head, generation)
  SegmentTable segments_;
  // Holes are lent from here (ReadInto): zeros, never written.
  const std::shared_ptr<const AlignedBuffer> zeros_;

  std::mutex commit_mu_;
  std::unique_ptr<LogWriter> log_writer_;  // commit_mu_
  std::vector<uint32_t> log_segments_;     // commit_mu_: the chain, head first
  uint64_t log_bytes_at_open_ = 0;         // commit_mu_: chain bytes before log_writer_
  uint64_t last_snapshot_bytes_ = 0;       // commit_mu_
  FailureState failure_;  // the first failed commit or placement: read-only after it

  mutable std::shared_mutex ns_mu_;
  Namespace ns_;                   // ns_mu_
  PendingLog pending_log_;         // ns_mu_: records not yet committed
  std::atomic<uint64_t> durable_seq_{0};  // the last record committed

  std::shared_mutex reclaim_mu_;
  std::unique_ptr<DataLog> data_;

  const CompressionPolicy default_policy_;
  PendingRuns pending_;
  std::vector<std::thread> compressors_;  // bg_mu_
  std::atomic<bool> compressing_{false};  // compressors run: writes may be queued
  mutable std::mutex encoder_stats_mu_;
  EncoderStats encoder_stats_;  // encoder_stats_mu_: all compressor threads' runs

  std::mutex bg_mu_;  // guards stop_ and wakes the committer
  std::condition_variable bg_cv_;
  bool stop_ = false;
  bool started_ = false;
  bool closed_ = false;
  std::thread committer_;
  std::thread cleaner_;
  std::mutex clean_mu_;

  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> compactions_{0};
  std::atomic<uint64_t> cleaned_bytes_{0};
  std::atomic<uint64_t> cleaned_segments_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> bytes_read_{0};
  std::atomic<uint64_t> read_errors_{0};
  std::atomic<uint64_t> metadata_bytes_{0};
};

}  // namespace ckptfs
