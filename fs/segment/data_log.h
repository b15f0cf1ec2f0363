// DataLog: turns many concurrent writes into whole, aligned, sequential
// segment writes.
//
// Writers append into an open in-memory segment buffer (each append 4 KiB
// aligned, checksummed as it is copied). A full buffer is sealed and handed
// to flusher threads, which write it to its segment in one large O_DIRECT
// write while the next buffer fills; the memory budget bounds how many
// buffers exist, and writers wait for a free one when all are in use. Sync
// writes the open buffer's filled prefix too, so fsync never waits for a
// segment to fill. Reads of data still in a buffer are served from memory.
// There is one open buffer per stream: user writes and the cleaner's moves go
// to different segments, so data that survived cleaning (cold) is not mixed
// with fresh checkpoint data that will die together.
//
// Thread-safe. Lock order: a caller may hold its own locks; mu_ is taken
// before the SegmentTable's, and a buffer's write_mu is never held with mu_.
#pragma once

#include <cassert>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ckptfs/read_view.h"
#include "ckptfs/status.h"
#include "format/superblock.h"
#include "io/block_device.h"
#include "format/physical_extent.h"
#include "segment/run_cache.h"
#include "segment/segment_table.h"
#include "util/mutex.h"
#include "util/aligned_buffer.h"
#include "util/buffer_pool.h"

namespace ckptfs {

struct DataLogOptions {
  uint64_t memory_budget = 512ull << 20;  // bytes of segment buffers
  unsigned flusher_threads = 2;
  uint64_t read_cache_bytes = 64ull << 20;  // verified runs kept for piecewise reads
  // Reads only: Append refuses (ReadOnly), and Sync and Close touch nothing.
  bool read_only = false;
};

struct DataLogStats {
  uint64_t bytes_appended = 0;
  uint64_t appends = 0;
  uint64_t segments_written = 0;
  uint64_t partial_flushes = 0;
  uint64_t device_bytes_written = 0;
  uint64_t waits_for_buffer = 0;
  uint64_t buffers_allocated = 0;
  uint64_t read_cache_hits = 0;
  uint64_t read_cache_misses = 0;
  uint64_t runs_decoded = 0;
};

// How a run's stored bytes decode: raw, or a compressed run's codec and
// decoded length.
struct RunCoding {
  uint8_t codec = 0;
  uint32_t raw_length = 0;
};

class DataLog {
 private:
  struct Buffer;

 public:
  enum class Stream { kUser = 0, kCleaner = 1 };

  // Keeps an append's reserved range from being written out (or its segment
  // retired) until the caller has recorded where the data went. Call Done()
  // after the extent is in the namespace; the destructor does it otherwise.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& o) noexcept { *this = std::move(o); }
    Ticket& operator=(Ticket&& o) noexcept;
    ~Ticket() { Done(); }
    const PhysicalExtent& extent() const { return extent_; }
    void Done();

   private:
    friend class DataLog;
    DataLog* log_ = nullptr;
    std::shared_ptr<Buffer> buffer_;
    uint64_t start_ = 0;
    PhysicalExtent extent_;
  };

  // `device` and `segments` must outlive the log.
  DataLog(BlockDevice* device, const Superblock& sb, SegmentTable* segments,
          const DataLogOptions& options);
  ~DataLog();
  DataLog(const DataLog&) = delete;
  DataLog& operator=(const DataLog&) = delete;

  // Starts the flusher threads (after any daemon fork).
  void Start();

  // Copies data[0, len) into the log; len must be at most segment_size.
  // `coding` says what the bytes are (already encoded by the caller).
  // NoSpace when no segment can be allocated; IOError after a failed device
  // write (the log then refuses further appends); ReadOnly when read-only.
  // `placing_promised` says the write is one room was promised to: a
  // compressor placing a queued write (SegmentTable::ReservePending), or a
  // write into space fallocate reserved.
  Result<Ticket> Append(const void* data, size_t len, Stream stream = Stream::kUser,
                        RunCoding coding = {}, bool placing_promised = false);

  // Reads len file bytes starting `skip` bytes into `extent` (decoded bytes
  // for a compressed run), verifying the extent's checksum when it comes
  // from the device (Corruption on mismatch).
  Status Read(const PhysicalExtent& extent, uint32_t skip, void* dst, size_t len);
  // The same bytes, lent: appended to `view`, which keeps the buffer that
  // holds them (the segment in memory, or the verified run) alive.
  Status ReadInto(const PhysicalExtent& extent, uint32_t skip, size_t len, ReadView* view);
  // Loads the run into the run cache as a read of it would (RunPrefetcher),
  // unless it is there already or a segment buffer holds it raw (reads lend
  // it from there). True when it loaded the run. A failed load is forgotten:
  // a reader who waited for it loads the run itself (RunCache's hint).
  bool Prefetch(const PhysicalExtent& extent);
  // Copies the run's stored bytes, still encoded, into *out (verified when
  // read from the device): what the cleaner moves.
  Status ReadStored(const PhysicalExtent& extent, std::string* out);

  // Makes every append whose ticket is done durable on the device.
  // Read-only: there are none, and it does not flush.
  Status Sync();

  // Seals the stream's open buffer, so its segment is written whole and
  // becomes a cleaning candidate; the room left in it is given up.
  void SealOpen(Stream stream);

  // Seals and writes everything, stops the flushers. Idempotent.
  // Read-only: stops them without a flush.
  Status Close();

  DataLogStats stats() const;
  // Bytes still free in the open buffers (counted as free space).
  uint64_t open_buffer_room() const;
  // Bytes still free in one stream's open buffer.
  uint64_t open_buffer_room(Stream stream) const;

 private:
  // One segment in memory. `fill`, `inflight`, `sealed` and `retired` are
  // guarded by the log's mu_, which `log_mu` points at; DataLog code reaches
  // them after HoldsLockOf(buffer), which requires mu_ and tells the
  // analysis that the buffer's lock is held (it cannot equate the two
  // otherwise).
  struct Buffer {
    explicit Buffer(Mutex* log) : log_mu(log) {}
    Mutex* const log_mu;
    uint32_t segment = 0;
    // From segment_buffers_: back on its shelf when the last holder (the
    // log, a reader it lent bytes to, a Sync) lets go.
    std::shared_ptr<AlignedBuffer> data;
    uint64_t fill GUARDED_BY(log_mu) = 0;                // reserved bytes
    std::multiset<uint64_t> inflight GUARDED_BY(log_mu);  // starts of unfinished tickets
    bool sealed GUARDED_BY(log_mu) = false;
    bool retired GUARDED_BY(log_mu) = false;  // written and released
    Mutex write_mu;                           // serializes device writes of this buffer
    uint64_t flushed GUARDED_BY(write_mu) = 0;  // bytes on the device
  };

  // The proof that holding mu_ is holding `buffer`'s lock (see Buffer).
  void HoldsLockOf(const Buffer& buffer) const REQUIRES(mu_) ASSERT_CAPABILITY(buffer.log_mu) {
    assert(buffer.log_mu == &mu_);
  }
  void FinishTicket(Buffer* buffer, uint64_t start) EXCLUDES(mu_);
  Result<std::shared_ptr<Buffer>> NewBufferLocked(Stream stream, SegmentTable::Requester who)
      REQUIRES(mu_);
  void SealLocked(std::shared_ptr<Buffer>& open) REQUIRES(mu_);
  Status WriteUpTo(Buffer* buffer, uint64_t end, bool partial) EXCLUDES(mu_);
  void FlusherLoop() EXCLUDES(mu_);
  void RetireLocked(const std::shared_ptr<Buffer>& buffer) REQUIRES(mu_);
  // The buffer still holding the run's segment in memory, or null.
  std::shared_ptr<Buffer> BufferHolding(const PhysicalExtent& extent) EXCLUDES(mu_);
  // The run's stored bytes: copied from its segment buffer while one holds
  // it, else read from the device and verified.
  Result<RunCache::Run> StoredRun(const PhysicalExtent& extent);
  // The run as file bytes, from the run cache, or loaded into it (one load
  // for all the readers that miss it at once).
  Result<RunCache::Run> DecodedRun(const PhysicalExtent& extent);
  // The run as file bytes: its stored bytes, decoded when compressed.
  Result<RunCache::Run> LoadDecodedRun(const PhysicalExtent& extent);

  BlockDevice* const device_;
  const Superblock sb_;
  SegmentTable* const segments_;
  const size_t max_buffers_;
  const unsigned flusher_count_;
  const bool read_only_;

  // Taken before the segment table's lock (allocation, Deactivate) and the
  // run cache's; never held across device I/O.
  mutable Mutex mu_;  // also guards Buffer's fields but `flushed` (Buffer::log_mu)
  CondVar changed_;  // tickets finished, buffers retired, work queued
  std::shared_ptr<Buffer> open_[2] GUARDED_BY(mu_);  // by Stream
  std::unordered_map<uint32_t, std::shared_ptr<Buffer>> active_ GUARDED_BY(mu_);  // by segment
  std::deque<std::shared_ptr<Buffer>> sealed_queue_ GUARDED_BY(mu_);
  size_t buffers_in_use_ GUARDED_BY(mu_) = 0;
  Status io_error_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  DataLogStats stats_ GUARDED_BY(mu_);
  std::vector<std::thread> flushers_ GUARDED_BY(mu_);
  RunCache read_cache_;
  // What reads decode and verify into: classes of 1 MiB (every run over
  // 256 KiB), 256, 128 and 64 KiB, 16 of each kept idle and 16 MiB in all.
  BufferPool run_buffers_{PhysicalExtent::kMaxRunLength, 16, /*classes=*/4};
  // Segment buffers' memory, reused rather than mapped afresh (each fresh
  // one is faulted in page by page under the appends' copies).
  BufferPool segment_buffers_;
};

}  // namespace ckptfs
