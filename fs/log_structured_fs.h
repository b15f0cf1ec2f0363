// LogStructuredFs: the front of the store, the FileSystem the daemon and
// the tools drive. It validates each operation, takes the locks in their
// order and hands the work to the parts it owns: the journal (namespace,
// commit), the data log (user bytes), the compression pipeline, the cleaner
// and the segment table. It owns no state of theirs; its own is the
// lifecycle (started, closed) and the read/write figures.
//
// Lock order, outermost first (see docs/design.md, "Locking"):
//   Cleaner pass lock        one cleaning pass at a time
//   Journal commit lock      one commit at a time (group commit)
//   Journal namespace lock   shared for lookups and reads, exclusive for
//                            every change
//   SequentialReads, RunPrefetcher  taken by a read under the namespace lock
//   DataLog, PendingRuns, SegmentTable, ReadPins, FailureState: their own
// No lock is held across device I/O but a buffer's write lock and the
// commit lock; reads pin segments against reuse instead (ReadPins).
#pragma once

#include <atomic>
#include <memory>

#include "ckptfs/filesystem.h"
#include "clean/cleaner.h"
#include "clean/evictor.h"
#include "compress/compression_pipeline.h"
#include "compress/compression_policies.h"
#include "compress/encoder_tally.h"
#include "format/superblock.h"
#include "io/block_device.h"
#include "io/tier_routing_device.h"
#include "journal/committed_images.h"
#include "journal/journal.h"
#include "segment/data_log.h"
#include "segment/run_prefetcher.h"
#include "segment/segment_table.h"
#include "segment/sequential_reads.h"
#include "util/aligned_buffer.h"
#include "util/mutex.h"

namespace ckptfs {

class LogStructuredFs : public FileSystem {
 public:
  static constexpr size_t kMaxNameLength = 255;  // bytes in one name (statfs says so)

  // `compression` is the mount's default policy, parsed from options.compress
  // by the caller (OpenFileSystemOnDevice), which reports a bad one.
  LogStructuredFs(const MountOptions& options, const CompressionPolicy& compression,
                  std::unique_ptr<BlockDevice> device, const Superblock& sb);
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
  Status OpenFile(uint64_t ino, int flags) override;
  void ReleaseFile(uint64_t ino) override;
  Result<bool> NoteAccess(uint64_t ino) override;
  Result<size_t> Read(uint64_t ino, uint64_t offset, size_t size, char* buf) override;
  Status ReadInto(uint64_t ino, uint64_t offset, size_t size, ReadView* view) override;
  Result<size_t> Write(uint64_t ino, uint64_t offset, const char* data, size_t size,
                       SetIdDrop drop_setid = SetIdDrop::kNone) override;
  Status Sync() override;
  Status Fallocate(uint64_t ino, int mode, uint64_t offset, uint64_t length,
                   SetIdDrop drop_setid) override;
  Result<size_t> CopyRange(uint64_t in, uint64_t in_offset, uint64_t out, uint64_t out_offset,
                           size_t length, SetIdDrop drop_setid) override;
  Status ReadDir(uint64_t ino, uint64_t cookie, bool plus, const DirFiller& fill) override;
  Status SetXattr(uint64_t ino, std::string_view name, std::string_view value, int flags) override;
  Result<std::string> GetXattr(uint64_t ino, std::string_view name) override;
  Result<std::string> ListXattr(uint64_t ino) override;
  Status RemoveXattr(uint64_t ino, std::string_view name) override;
  struct statvfs StatFs() override;
  StoreStats Stats() override;
  CommittedImageSource* committed_images() override { return committed_images_.get(); }
  void ReadEvictedRunsFrom(RemoteTier* tier) override { device_->Attach(tier); }

 private:
  // Creates an inode of `mode` named `name` in `parent`.
  Result<struct stat> CreateNode(uint64_t parent, std::string_view name, uint32_t mode,
                                 uint32_t uid, uint32_t gid, uint64_t rdev,
                                 std::string_view target) REQUIRES(journal_.mu());
  // Frees `node` if nothing names or references it (read-only: never).
  Status FreeIfUnused(const Inode& node) REQUIRES(journal_.mu());
  // Whether `drop` clears anything of `node` (set-id bits, file capability).
  static bool NeedsSetIdDrop(const Inode& node, SetIdDrop drop);
  Status DropSetIdBits(uint64_t ino, SetIdDrop drop) REQUIRES(journal_.mu());
  // Whether a read of `node` at `now_ns` moves its atime (MountOptions::atime).
  bool AtimeDue(const Inode& node, int64_t now_ns) const REQUIRES_SHARED(journal_.mu());
  // Validates that `parent` is a live directory and `name` a legal new entry.
  Result<const Inode*> WritableDir(uint64_t parent, std::string_view name) const
      REQUIRES_SHARED(journal_.mu());
  // A new file or directory in `parent` inherits its compression xattr.
  Status InheritCompression(const Inode& parent, uint64_t child) REQUIRES(journal_.mu());
  // CopyRange's work on at most `length` bytes under one hold of the
  // namespace lock; the bytes copied, 0 at the end of `in`.
  Result<uint64_t> CopySlice(uint64_t in, uint64_t in_offset, uint64_t out, uint64_t out_offset,
                             uint64_t length, SetIdDrop drop_setid) EXCLUDES(journal_.mu());
  // Appends a user write raw, making room when the store is full;
  // `into_reserved`: all of it replaces space fallocate reserved, whose
  // promised room it may take.
  Result<DataLog::Ticket> AppendUserData(const char* data, size_t len, bool into_reserved);
  // Releases a kernel reference or an open handle and frees the inode if
  // that was its last use.
  enum class Use { kLookup, kOpenHandle };
  void DropUse(uint64_t ino, Use use, uint64_t count) EXCLUDES(journal_.mu());
  struct stat StatOf(const Inode& node) const;
  // The device under the router, when options_.track_committed_images.
  WriteTrackingDevice* tracking_device() const {
    return static_cast<WriteTrackingDevice*>(device_->local());
  }
  // statfs figures given the inode count.
  struct statvfs StatFsFor(size_t inodes) const;
  // Queues the runs past a sequential read of `node` for the prefetcher.
  void QueueReadAhead(uint64_t ino, const Inode& node, uint64_t offset, uint64_t length)
      REQUIRES_SHARED(journal_.mu());

  const MountOptions options_;
  // Reads of runs evicted to a tier go to the tier; everything else to the
  // store's device (a WriteTrackingDevice when options_.track_committed_images).
  const std::unique_ptr<TierRoutingDevice> device_;
  const Superblock sb_;  // geometry and store id: never change
  // Holes are lent from here (ReadInto): zeros, never written.
  const std::shared_ptr<const AlignedBuffer> zeros_;

  // The parts, in the order they depend on each other (and are built).
  SegmentTable segments_;
  DataLog data_;
  Journal journal_;
  CompressionPolicies policies_;
  EncoderTally encoder_tally_;
  // Set when options_.track_committed_images (a tier may be attached).
  const std::unique_ptr<Evictor> evictor_;
  Cleaner cleaner_;
  CompressionPipeline pipeline_;
  // Set when options_.track_committed_images: device_ is then a
  // WriteTrackingDevice.
  std::unique_ptr<CommittedImages> committed_images_;
  // Set when options_.prefetch_bytes: which reads are sequential, and the
  // threads that load the runs ahead of them; after the parts its loads
  // use, so it is destroyed before them.
  SequentialReads sequential_reads_;
  const std::unique_ptr<RunPrefetcher> prefetcher_;

  Mutex lifecycle_mu_;
  bool started_ GUARDED_BY(lifecycle_mu_) = false;
  bool closed_ GUARDED_BY(lifecycle_mu_) = false;

  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> bytes_copied_{0};
  std::atomic<uint64_t> bytes_read_{0};
  std::atomic<unsigned> reads_in_flight_{0};  // in ReadInto now; counted when prefetcher_
  std::atomic<uint64_t> read_errors_{0};
};

}  // namespace ckptfs
