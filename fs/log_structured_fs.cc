// LogStructuredFs: the lifecycle, the read and write paths through the parts
// (journal, data log, pipeline, cleaner) and the figures; the namespace
// operations are in namespace_ops.cc.
#include "log_structured_fs.h"

#include <fcntl.h>
#include <linux/falloc.h>

#include <linux/fs.h>
#include <spdlog/spdlog.h>
#include <sys/xattr.h>
#include <time.h>

#include <algorithm>
#include <cstring>

#include "io/write_tracking_device.h"
#include "util/clock.h"

namespace ckptfs {
namespace {

constexpr size_t kMaxAppend = 1 << 20;  // the FUSE max write; one stored extent each

// Runs are loaded ahead only while at most this many reads are in flight:
// read-ahead is for readers who leave the device idle. With more it adds no
// parallelism, only work: eight readers of a RADOS image restored 10-15%
// slower with it on two cores, where one reader read 40-60% faster
// (docs/tuning.md#read-ahead-gate).
constexpr unsigned kMaxReadsForReadAhead = 2;

DataLogOptions DataLogOptionsFor(const MountOptions& options) {
  DataLogOptions data;
  // A quarter of the budget is for writes waiting to be compressed
  // (CompressionPipeline).
  data.memory_budget = options.memory_budget - options.memory_budget / 4;
  data.flusher_threads = options.flusher_threads;
  data.read_only = options.read_only;
  // Runs loaded ahead wait there for their reader: room for the window of
  // each reader that may load ahead, twice (the one being read, the next).
  data.read_cache_bytes = std::max(options.run_cache_bytes, 2 * kMaxReadsForReadAhead * options.prefetch_bytes);
  return data;
}

// The device the store runs on: `device` itself, or a WriteTrackingDevice
// over it when a tier needs to know what each commit wrote; under a router
// that sends reads of runs evicted to a tier there.
std::unique_ptr<TierRoutingDevice> RoutedDevice(std::unique_ptr<BlockDevice> device,
                                                const MountOptions& options,
                                                const Superblock& sb) {
  if (options.track_committed_images) {
    device = std::make_unique<WriteTrackingDevice>(std::move(device), sb.data_start,
                                                   sb.segment_size, sb.segment_count);
  }
  return std::make_unique<TierRoutingDevice>(std::move(device));
}

}  // namespace

LogStructuredFs::LogStructuredFs(const MountOptions& options,
                                 const CompressionPolicy& compression,
                                 std::unique_ptr<BlockDevice> device, const Superblock& sb)
    : options_(options),
      device_(RoutedDevice(std::move(device), options, sb)),
      sb_(sb),
      zeros_(std::make_shared<const AlignedBuffer>(PhysicalExtent::kMaxRunLength)),
      // A segment is provisioned whole when handed out, so no write into it
      // can meet a full filesystem under a sparse store.
      segments_(sb,
                [this](uint32_t segment) {
                  return device_->Provision(sb_.SegmentOffset(segment), sb_.segment_size);
                }),
      data_(device_.get(), sb_, &segments_, DataLogOptionsFor(options)),
      journal_(options, device_.get(), sb_, &segments_, &data_),
      policies_(compression),
      evictor_(options.track_committed_images
                   ? std::make_unique<Evictor>(sb_, &journal_, &segments_, tracking_device(),
                                               device_.get())
                   : nullptr),
      cleaner_(options, sb_, &journal_, &data_, &segments_, &policies_, &encoder_tally_,
               &bytes_written_, evictor_.get()),
      pipeline_(options, &journal_, &segments_, &encoder_tally_,
                [this](const char* data, size_t len, RunCoding coding) {
                  return cleaner_.AppendMakingRoom(data, len, coding, /*placing_promised=*/true);
                }),
      sequential_reads_(options.prefetch_bytes),
      prefetcher_(options.prefetch_bytes > 0
                      ? std::make_unique<RunPrefetcher>(
                            std::max(1u, options.prefetch_threads),
                            // A few windows' runs waiting at once.
                            std::max<size_t>(64, 4 * options.prefetch_bytes / PhysicalExtent::kMaxRunLength),
                            [this](const PhysicalExtent& run) { return data_.Prefetch(run); })
                      : nullptr) {
  if (options.track_committed_images) {
    committed_images_ = std::make_unique<CommittedImages>(&journal_, &segments_, tracking_device(),
                                                          device_.get(), &bytes_written_);
  }
}

LogStructuredFs::~LogStructuredFs() { (void)Close(); }

Status LogStructuredFs::Recover() { return journal_.Recover(); }

void LogStructuredFs::Start() {
  MutexLock lock(&lifecycle_mu_);
  if (started_ || closed_) return;
  started_ = true;
  if (prefetcher_) prefetcher_->Start();
  // A read-only store has nothing to flush, commit, clean or compress.
  if (options_.read_only) return;
  data_.Start();
  journal_.Start();
  cleaner_.Start();
  pipeline_.Start();
}

Status LogStructuredFs::Close() {
  {
    MutexLock lock(&lifecycle_mu_);
    if (closed_) return Status::Ok();
    closed_ = true;
    // Never started: the flushers must run for the last commit (a
    // read-only store makes none).
    if (!started_ && !options_.read_only) data_.Start();
  }
  if (prefetcher_) prefetcher_->Stop();
  journal_.Stop();
  cleaner_.Stop();
  // Every acknowledged write reaches the log before the store closes.
  pipeline_.Stop();
  // Read-only: both write nothing.
  Status s = journal_.Commit();
  Status c = data_.Close();
  return s.ok() ? c : s;
}

Status LogStructuredFs::Sync() {
  // Writes handed to the compressor threads get their records first.
  pipeline_.WaitPlaced();
  return journal_.CommitNow();
}


Result<size_t> LogStructuredFs::Read(uint64_t ino, uint64_t offset, size_t size, char* buf) {
  ReadView view;
  CKPTFS_RETURN_IF_ERROR(ReadInto(ino, offset, size, &view));
  view.CopyTo(buf);
  return view.size();
}

Status LogStructuredFs::ReadInto(uint64_t ino, uint64_t offset, size_t size, ReadView* view) {
  // Counted only for the read-ahead's gate (QueueReadAhead).
  struct InFlight {
    std::atomic<unsigned>* count;
    ~InFlight() {
      if (count) count->fetch_sub(1, std::memory_order_relaxed);
    }
  } in_flight{prefetcher_ ? &reads_in_flight_ : nullptr};
  if (in_flight.count) in_flight.count->fetch_add(1, std::memory_order_relaxed);
  std::vector<ExtentPiece> pieces;
  std::vector<std::shared_ptr<const PendingRun>> pending;  // by pending piece, in order
  ReadPins::Pin pin;
  {
    ReaderLock lock(journal_.mu());
    const Inode* node = journal_.ns().Find(ino);
    if (!node) return Status::NotFound("no inode " + std::to_string(ino));
    if (node->is_dir()) return Status::IsDirectory("read of a directory");
    if (offset >= node->size) return Status::Ok();
    const size_t n = static_cast<size_t>(std::min<uint64_t>(size, node->size - offset));
    pieces = node->extents.Lookup(offset, n);
    // Held here, a pending run outlives its placement (which needs the
    // namespace lock exclusively) for as long as this read uses it.
    for (const ExtentPiece& p : pieces) {
      if (!p.hole && p.phys.pending()) pending.push_back(pipeline_.Find(p.phys.addr));
    }
    // Before the namespace lock goes: the segments the extents point into
    // are not reused until each run is in memory, where the view keeps it.
    pin = segments_.PinForRead();
    if (prefetcher_) QueueReadAhead(ino, *node, offset, n);
  }
  const size_t before = view->size();
  size_t next_pending = 0;
  for (const ExtentPiece& p : pieces) {
    if (p.hole) {
      for (uint64_t left = p.length; left > 0;) {
        const size_t len = static_cast<size_t>(std::min<uint64_t>(left, zeros_->size()));
        view->Add(zeros_->data(), len, zeros_);
        left -= len;
      }
      continue;
    }
    if (p.phys.pending()) {
      std::shared_ptr<const PendingRun> run = pending[next_pending++];
      if (!run) return Status::IOError("pending run vanished");  // a bug, not a disk error
      const char* at = run->data.data() + p.skip;
      view->Add(at, p.length, std::move(run));
      continue;
    }
    Status s = data_.ReadInto(p.phys, p.skip, p.length, view);
    if (!s.ok()) {
      read_errors_.fetch_add(1);
      pin.Release();
      std::string path;
      {
        ReaderLock lock(journal_.mu());
        path = journal_.ns().PathOf(ino);
      }
      spdlog::error("read of {} (inode {}) bytes {}..{} failed: {}", path, ino, p.offset,
                    p.offset + p.length, s.ToString());
      return s;
    }
  }
  bytes_read_.fetch_add(view->size() - before);
  return Status::Ok();
}

void LogStructuredFs::QueueReadAhead(uint64_t ino, const Inode& node, uint64_t offset, uint64_t length) {
  const bool may_load = reads_in_flight_.load(std::memory_order_relaxed) <= kMaxReadsForReadAhead;
  const ReadAheadRange ahead = sequential_reads_.Next(ino, offset, length, node.size, may_load);
  if (ahead.length == 0) return;
  std::vector<PhysicalExtent> runs;
  for (const ExtentPiece& p : node.extents.Lookup(ahead.offset, ahead.length)) {
    if (p.hole || p.phys.pending()) continue;
    if (!runs.empty() && runs.back().addr == p.phys.addr) continue;  // pieces of one run
    runs.push_back(p.phys);
  }
  if (runs.empty()) return;
  // Taken under the namespace lock, as the read's own pin is.
  prefetcher_->Submit(runs, std::make_shared<ReadPins::Pin>(segments_.PinForRead()));
}

Result<DataLog::Ticket> LogStructuredFs::AppendUserData(const char* data, size_t len,
                                                        bool into_reserved) {
  auto ticket = data_.Append(data, len, DataLog::Stream::kUser, RunCoding{}, into_reserved);
  if (ticket.ok() || !ticket.status().IsNoSpace()) return ticket;
  // A commit stops at the first write still waiting for a compressor, and
  // segments freed by deletions become reusable only with a commit: let
  // those writes be placed first.
  pipeline_.WaitPlaced();
  return cleaner_.AppendMakingRoom(data, len, RunCoding{}, into_reserved);
}

Result<size_t> LogStructuredFs::Write(uint64_t ino, uint64_t offset, const char* data,
                                      size_t size, SetIdDrop drop_setid) {
  bool drop_privileges = false;
  bool into_reserved = false;  // every byte lands in space fallocate reserved
  CompressionPolicy policy;
  {
    ReaderLock lock(journal_.mu());
    CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
    const Inode* node = journal_.ns().Find(ino);
    if (!node) return Status::NotFound("no inode " + std::to_string(ino));
    if (!node->is_regular()) return Status::Invalid("write to a non-regular file");
    drop_privileges = NeedsSetIdDrop(*node, drop_setid);
    policy = policies_.For(*node);
    // Looked up only in files that hold reserved space: not on every write.
    if (node->extents.reserved_bytes() >= size) {
      const std::vector<ExtentPiece> pieces = node->extents.Lookup(offset, size);
      into_reserved = std::all_of(pieces.begin(), pieces.end(),
                                  [](const ExtentPiece& p) { return p.phys.reserved(); });
    }
  }
  // Compressed later, by the cleaner, when the mount is idle.
  if (options_.compress_when_idle) policy.enabled = false;
  if (drop_privileges) {
    WriterLock lock(journal_.mu());
    CKPTFS_RETURN_IF_ERROR(DropSetIdBits(ino, drop_setid));
  }
  size_t done = 0;
  while (done < size) {
    const size_t len = std::min(kMaxAppend, size - done);
    if (policy.enabled) {
      CKPTFS_ASSIGN_OR_RETURN(bool queued,
                              pipeline_.Submit(ino, offset + done, data + done, len, policy));
      if (queued) {
        done += len;
        continue;
      }
    }
    // Into reserved space, the write takes the room promised to it.
    CKPTFS_ASSIGN_OR_RETURN(DataLog::Ticket ticket,
                            AppendUserData(data + done, len, into_reserved));
    {
      WriterLock lock(journal_.mu());
      if (!journal_.ns().Find(ino)) return Status::NotFound("inode freed during write");
      CKPTFS_RETURN_IF_ERROR(journal_.Apply(
          record::WriteExtent{ino, offset + done, static_cast<uint32_t>(len), ticket.extent(), 0,
                              options_.writes_set_mtime ? NowNs() : 0}));
    }
    ticket.Done();
    done += len;
  }
  bytes_written_.fetch_add(size);
  return size;
}

Status LogStructuredFs::Fallocate(uint64_t ino, int mode, uint64_t offset, uint64_t length,
                                  SetIdDrop drop_setid) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  const bool keep_size = mode & FALLOC_FL_KEEP_SIZE;
  const bool punch = mode & FALLOC_FL_PUNCH_HOLE;
  const bool zero = mode & FALLOC_FL_ZERO_RANGE;
  if ((mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) != 0 ||
      (punch && (!keep_size || zero))) {
    return Status::NotSupported("fallocate mode " + std::to_string(mode));
  }
  if (length == 0 || offset + length < offset) return Status::Invalid("fallocate range");
  // Reserved space is whole blocks: a write anywhere in a block the range
  // touches needs no more.
  const uint64_t first = offset / kBlockSize * kBlockSize;
  const uint64_t end = AlignUp(offset + length, kBlockSize);  // the kernel bounds it by off_t
  // A store short of free segments makes room as a write would: deletions
  // awaiting a commit get it, then the cleaner reclaims dead space, round
  // after round while it frees something, before the reservation is
  // refused.
  for (int round = 0;; ++round) {
    WriterLock lock(journal_.mu());
    const Inode* node = journal_.ns().Find(ino);
    if (!node) return Status::NotFound("no inode " + std::to_string(ino));
    if (!node->is_regular()) return Status::Invalid("fallocate of a non-regular file");
    const int64_t now = NowNs();
    if (punch || zero) {
      CKPTFS_RETURN_IF_ERROR(DropSetIdBits(ino, drop_setid));
      // A hole is the log-structured way to zero a range: the bytes it
      // unmapped die, and reads of it return zeros.
      CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::PunchHole{ino, offset, length, now}));
    } else {
      uint64_t unreserved = 0;  // hole bytes the range would reserve
      for (const ExtentPiece& p : node->extents.Lookup(first, end - first)) {
        if (p.hole && !p.phys.reserved()) unreserved += p.length;
      }
      // Promised for the moment the record takes to apply, so that the
      // check and the taking are one step for every other writer; from
      // then on the reserved extents are the promise (SegmentTable).
      if (unreserved > 0) {
        if (Status s = segments_.ReservePending(unreserved); !s.ok()) {
          const auto refuse = [&] {
            return Status::NoSpace("fallocate of " + std::to_string(unreserved) +
                                   " bytes: more than the free space");
          };
          if (!s.IsNoSpace() || round >= 64) return refuse();
          lock.Unlock();
          if (round == 0 || segments_.PendingFree() > 0) {
            pipeline_.WaitPlaced();  // a commit stops at a write still queued
            CKPTFS_RETURN_IF_ERROR(journal_.CommitNow());
            continue;
          }
          CKPTFS_ASSIGN_OR_RETURN(Cleaner::Freed freed, cleaner_.MakeRoomOnce());
          if (freed.evicted == 0 && freed.cleaned == 0) return refuse();
          continue;
        }
      }
      CKPTFS_RETURN_IF_ERROR(DropSetIdBits(ino, drop_setid));
      Status s = unreserved > 0 ? journal_.Apply(record::Reserve{ino, first, end - first})
                                : Status::Ok();
      if (unreserved > 0) segments_.ReleasePending(unreserved);
      CKPTFS_RETURN_IF_ERROR(s);
    }
    if (!keep_size && offset + length > node->size) {
      CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::Truncate{ino, offset + length, now}));
    }
    return Status::Ok();
  }
}

Result<size_t> LogStructuredFs::CopyRange(uint64_t in, uint64_t in_offset, uint64_t out,
                                          uint64_t out_offset, size_t length,
                                          SetIdDrop drop_setid) {
  CKPTFS_RETURN_IF_ERROR(journal_.CheckWritable());
  if (in_offset + length < in_offset || out_offset + length < out_offset) {
    return Status::Invalid("copy range past the largest offset");
  }
  // A slice at a time, so a copy of a whole checkpoint does not hold the
  // namespace lock (and every reader) for all its records at once.
  constexpr uint64_t kSlice = 64 << 20;
  uint64_t done = 0;
  while (done < length) {
    CKPTFS_ASSIGN_OR_RETURN(
        uint64_t n, CopySlice(in, in_offset + done, out, out_offset + done,
                              std::min<uint64_t>(kSlice, length - done),
                              done == 0 ? drop_setid : SetIdDrop::kNone));
    if (n == 0) break;  // the end of the source
    done += n;
  }
  bytes_copied_.fetch_add(done);
  return static_cast<size_t>(done);
}

Result<uint64_t> LogStructuredFs::CopySlice(uint64_t in, uint64_t in_offset, uint64_t out,
                                            uint64_t out_offset, uint64_t length,
                                            SetIdDrop drop_setid) {
  // Bytes still waiting for a compressor are stored nowhere yet: the copy
  // waits for them to be placed (a write racing it may queue more: again).
  for (int attempt = 0;; ++attempt) {
    WriterLock lock(journal_.mu());
    const Inode* src = journal_.ns().Find(in);
    const Inode* dst = journal_.ns().Find(out);
    if (!src || !dst) return Status::NotFound("no inode " + std::to_string(src ? out : in));
    if (!src->is_regular() || !dst->is_regular()) {
      return Status::Invalid("copy between non-regular files");
    }
    if (in_offset >= src->size) return uint64_t{0};
    const uint64_t n = std::min<uint64_t>(length, src->size - in_offset);
    if (in == out && in_offset < out_offset + n && out_offset < in_offset + n) {
      return Status::Invalid("copy between overlapping ranges of one file");
    }
    std::vector<ExtentPiece> pieces = src->extents.Lookup(in_offset, n);
    const bool pending = std::any_of(pieces.begin(), pieces.end(), [](const ExtentPiece& p) {
      return !p.hole && p.phys.pending();
    });
    if (pending && attempt < 16) {
      lock.Unlock();
      pipeline_.WaitPlaced();
      continue;
    }
    if (pending) return Status::Busy("copy source keeps being rewritten");
    CKPTFS_RETURN_IF_ERROR(DropSetIdBits(out, drop_setid));
    const int64_t now = NowNs();
    // One record per source extent: the copy references the same runs (the
    // segment table counts shared bytes once) and the holes stay holes.
    for (const ExtentPiece& p : pieces) {
      const uint64_t at = out_offset + (p.offset - in_offset);
      if (p.hole) {
        CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::PunchHole{out, at, p.length, now}));
      } else {
        CKPTFS_RETURN_IF_ERROR(journal_.Apply(
            record::WriteExtent{out, at, static_cast<uint32_t>(p.length), p.phys, p.skip,
                                options_.writes_set_mtime ? now : 0}));
      }
    }
    if (dst->size < out_offset + n) {
      CKPTFS_RETURN_IF_ERROR(journal_.Apply(record::Truncate{out, out_offset + n, now}));
    }
    return n;
  }
}

struct statvfs LogStructuredFs::StatFs() {
  size_t inodes;
  {
    ReaderLock lock(journal_.mu());
    inodes = journal_.ns().inode_count();
  }
  return StatFsFor(inodes);
}

struct statvfs LogStructuredFs::StatFsFor(size_t inodes) const {
  SegmentUsage u = segments_.Usage();
  const uint64_t seg = sb_.segment_size;
  const uint64_t usable_segments = u.total - std::min(u.total, u.reserved + u.meta);
  // Free segments of a sparse store that the filesystem under it has no
  // room for are not free space.
  const uint64_t unbacked = (device_->ProvisionShortfall() + seg - 1) / seg;
  const uint64_t free_total = u.free + u.pending_free;
  const uint64_t free_segments =
      free_total - std::min(free_total, u.reserved + unbacked);
  struct statvfs sv {};
  sv.f_bsize = kBlockSize;
  sv.f_frsize = kBlockSize;
  sv.f_blocks = usable_segments * seg / kBlockSize;
  // Space fallocate reserved is in use already, as it is on ext4.
  const uint64_t free_bytes = free_segments * seg + data_.open_buffer_room();
  sv.f_bfree = std::min<uint64_t>(
      sv.f_blocks, (free_bytes - std::min(free_bytes, u.fallocated_bytes)) / kBlockSize);
  // Available is what a fallocate could reserve now (no more than free):
  // free segments beyond the reserves and the promises, not the open
  // segment's rest, which other writes may take before a promise is kept.
  const uint64_t promisable = segments_.PromisableBytes();
  sv.f_bavail = std::min<uint64_t>(
      sv.f_bfree, (promisable - std::min(promisable, unbacked * seg)) / kBlockSize);
  sv.f_files = 1ull << 32;
  sv.f_ffree = sv.f_files - inodes;
  sv.f_namemax = kMaxNameLength;
  if (options_.read_only) sv.f_flag |= ST_RDONLY;
  return sv;
}

StoreStats LogStructuredFs::Stats() {
  SegmentUsage u = segments_.Usage();
  DataLogStats d = data_.stats();
  StoreStats s;
  s.store_id = sb_.store_id;
  s.segment_size = sb_.segment_size;
  s.segments_total = u.total;
  s.segments_free = u.free;
  s.segments_data = u.data;
  s.segments_meta = u.meta;
  s.segments_pending_free = u.pending_free;
  s.backing_shortfall_bytes = device_->ProvisionShortfall();
  s.live_bytes = u.live_bytes;
  s.live_file_bytes = u.live_file_bytes;
  s.dead_bytes = u.data * sb_.segment_size - std::min<uint64_t>(u.data * sb_.segment_size, u.live_bytes);
  s.fallocated_bytes = u.fallocated_bytes;
  {
    ReaderLock lock(journal_.mu());
    s.inodes = journal_.ns().inode_count();
  }
  s.bytes_written = bytes_written_.load();
  s.bytes_copied = bytes_copied_.load();
  s.shared_bytes = u.shared_bytes;
  s.bytes_read = bytes_read_.load();
  s.read_errors = read_errors_.load();
  s.data_device_bytes = d.device_bytes_written;
  const JournalStats j = journal_.stats();
  s.metadata_device_bytes = j.metadata_device_bytes;
  s.segments_written = d.segments_written;
  s.partial_flushes = d.partial_flushes;
  s.buffer_waits = d.waits_for_buffer;
  s.read_cache_hits = d.read_cache_hits;
  s.read_cache_misses = d.read_cache_misses;
  if (prefetcher_) {
    s.prefetched_runs = prefetcher_->loaded();
    s.prefetch_pending = prefetcher_->pending();
  }
  s.stored_runs_written = d.appends;
  s.commits = j.commits;
  s.log_compactions = j.compactions;
  const CleanerStats c = cleaner_.stats();
  s.cleaner_bytes_moved = c.bytes_moved;
  s.cleaner_segments = c.segments;
  if (evictor_) {
    const EvictorStats ev = evictor_->stats();
    s.evicted_segments = ev.segments;
    s.evicted_bytes = ev.bytes;
  }
  s.remote_objects = u.remote_objects;
  s.remote_live_bytes = u.remote_live_bytes;
  const RemoteReadCounters remote = device_->remote_counters();
  s.remote_reads = remote.reads;
  s.remote_read_bytes = remote.bytes;
  s.cache_hit_bytes = remote.cache_hit_bytes;
  s.cache_fill_bytes = remote.cache_fill_bytes;
  const EncoderStats e = encoder_tally_.Total();
  s.compressed_runs = e.runs - e.runs_raw;
  s.compress_raw_runs = e.runs_raw;
  s.compress_bytes_in = e.bytes_in;
  s.compress_bytes_out = e.bytes_out;
  const PendingRunStats p = pipeline_.stats();
  s.compress_pending_bytes = p.held_bytes;
  s.compress_waits = p.waits;
  s.compress_skipped_runs = p.refused;
  s.runs_decoded = d.runs_decoded;
  s.read_only = options_.read_only;
  return s;
}

}  // namespace ckptfs
