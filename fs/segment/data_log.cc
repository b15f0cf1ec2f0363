// DataLog implementation.
#include "segment/data_log.h"

#include <algorithm>
#include <cstring>

#include "compress/extent_codec.h"
#include "util/crc32c.h"

namespace ckptfs {

DataLog::Ticket& DataLog::Ticket::operator=(Ticket&& o) noexcept {
  if (this != &o) {
    Done();
    log_ = std::exchange(o.log_, nullptr);
    buffer_ = std::move(o.buffer_);
    start_ = o.start_;
    extent_ = o.extent_;
  }
  return *this;
}

void DataLog::Ticket::Done() {
  if (log_) log_->FinishTicket(buffer_.get(), start_);
  log_ = nullptr;
  buffer_.reset();
}

DataLog::DataLog(BlockDevice* device, const Superblock& sb, SegmentTable* segments,
                 const DataLogOptions& options)
    : device_(device),
      sb_(sb),
      segments_(segments),
      max_buffers_(std::max<size_t>(2, options.memory_budget / sb.segment_size)),
      flusher_count_(std::max(1u, options.flusher_threads)),
      read_only_(options.read_only),
      read_cache_(options.read_cache_bytes),
      // A buffer is made fresh only when none is shelved, so buffers in use
      // and shelved stay within the budget (but for those readers still hold).
      segment_buffers_(sb.segment_size, max_buffers_) {}

DataLog::~DataLog() { (void)Close(); }

void DataLog::Start() {
  MutexLock lock(&mu_);
  if (!flushers_.empty() || stopping_) return;
  for (unsigned i = 0; i < flusher_count_; ++i) flushers_.emplace_back([this] { FlusherLoop(); });
}

Result<DataLog::Ticket> DataLog::Append(const void* data, size_t len, Stream stream,
                                        RunCoding coding, bool placing_promised) {
  using Requester = SegmentTable::Requester;
  const Requester who = stream == Stream::kCleaner ? Requester::kCleaner
                        : placing_promised         ? Requester::kPromised
                                                   : Requester::kUser;
  if (read_only_) return Status::ReadOnly("data log opened read-only");
  const uint64_t stored = AlignUp(len, kBlockSize);
  if (len == 0 || stored > sb_.segment_size) {
    return Status::Invalid("append of " + std::to_string(len) + " bytes");
  }
  std::shared_ptr<Buffer> buffer;
  uint64_t start = 0;
  {
    MutexLock lock(&mu_);
    for (;;) {
      if (!io_error_.ok()) return io_error_;
      if (stopping_) return Status::IOError("data log is closed");
      std::shared_ptr<Buffer>& open = open_[static_cast<int>(stream)];
      if (open) {
        HoldsLockOf(*open);
        if (open->fill + stored <= sb_.segment_size) break;
        SealLocked(open);
      }
      CKPTFS_ASSIGN_OR_RETURN(auto fresh, NewBufferLocked(stream, who));
      if (fresh) open = std::move(fresh);
    }
    buffer = open_[static_cast<int>(stream)];
    HoldsLockOf(*buffer);
    start = buffer->fill;
    buffer->fill += stored;
    buffer->inflight.insert(start);
    stats_.appends += 1;
    stats_.bytes_appended += len;
  }
  char* dst = buffer->data->data() + start;
  std::memcpy(dst, data, len);
  std::memset(dst + len, 0, stored - len);
  Ticket ticket;
  ticket.log_ = this;
  ticket.buffer_ = buffer;
  ticket.start_ = start;
  ticket.extent_ = PhysicalExtent{sb_.SegmentOffset(buffer->segment) + start,
                                  static_cast<uint32_t>(len), crc32c::Value(data, len),
                                  coding.codec, coding.codec != 0 ? coding.raw_length : 0};
  return ticket;
}

// Returns a new open buffer, or nullptr after waiting for one to come free
// (the caller re-checks its state, since others ran while it waited).
Result<std::shared_ptr<DataLog::Buffer>> DataLog::NewBufferLocked(Stream stream,
                                                                 SegmentTable::Requester who) {
  if (buffers_in_use_ >= max_buffers_) {
    stats_.waits_for_buffer += 1;
    changed_.Wait(&mu_);
    return std::shared_ptr<Buffer>();
  }
  CKPTFS_ASSIGN_OR_RETURN(uint32_t segment, segments_->AllocateData(who));
  // Runs cached from this segment's previous life are about to be overwritten.
  read_cache_.Invalidate(sb_.SegmentOffset(segment), sb_.SegmentOffset(segment) + sb_.segment_size);
  auto buffer = std::make_shared<Buffer>(&mu_);
  buffer->segment = segment;
  buffer->data = segment_buffers_.Get(sb_.segment_size);
  ++buffers_in_use_;
  active_[segment] = buffer;
  return buffer;
}

void DataLog::SealLocked(std::shared_ptr<Buffer>& open) {
  HoldsLockOf(*open);
  open->sealed = true;
  sealed_queue_.push_back(std::move(open));
  open.reset();
  changed_.NotifyAll();
}

void DataLog::FinishTicket(Buffer* buffer, uint64_t start) {
  MutexLock lock(&mu_);
  HoldsLockOf(*buffer);
  buffer->inflight.erase(buffer->inflight.find(start));
  changed_.NotifyAll();
}

Status DataLog::WriteUpTo(Buffer* buffer, uint64_t end, bool partial) {
  uint64_t written = 0;
  Status s;
  {
    MutexLock wl(&buffer->write_mu);
    if (buffer->flushed < end) {
      s = device_->Write(sb_.SegmentOffset(buffer->segment) + buffer->flushed,
                         buffer->data->data() + buffer->flushed, end - buffer->flushed);
      if (s.ok()) {
        written = end - buffer->flushed;
        buffer->flushed = end;
      }
    }
  }
  MutexLock lock(&mu_);
  if (!s.ok()) {
    if (io_error_.ok()) io_error_ = s;
    changed_.NotifyAll();
    return s;
  }
  stats_.device_bytes_written += written;
  if (partial && written > 0) stats_.partial_flushes += 1;
  return s;
}

void DataLog::RetireLocked(const std::shared_ptr<Buffer>& buffer) {
  HoldsLockOf(*buffer);
  buffer->retired = true;
  auto it = active_.find(buffer->segment);
  if (it != active_.end() && it->second == buffer) active_.erase(it);
  --buffers_in_use_;
  stats_.segments_written += 1;
  segments_->Deactivate(buffer->segment);
  changed_.NotifyAll();
}

void DataLog::FlusherLoop() {
  MutexLock lock(&mu_);
  for (;;) {
    while (!stopping_ && sealed_queue_.empty()) changed_.Wait(&mu_);
    if (sealed_queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    std::shared_ptr<Buffer> buffer = std::move(sealed_queue_.front());
    sealed_queue_.pop_front();
    HoldsLockOf(*buffer);
    while (!buffer->inflight.empty()) changed_.Wait(&mu_);
    const uint64_t end = buffer->fill;
    lock.Unlock();
    (void)WriteUpTo(buffer.get(), end, /*partial=*/false);  // failure lands in io_error_
    lock.Lock();
    RetireLocked(buffer);
  }
}

std::shared_ptr<DataLog::Buffer> DataLog::BufferHolding(const PhysicalExtent& extent) {
  // A remote run (evicted to the tier) was written out long ago.
  if (extent.remote()) return nullptr;
  MutexLock lock(&mu_);
  auto it = active_.find(segments_->SegmentOf(extent.addr));
  return it != active_.end() ? it->second : nullptr;
}

Result<RunCache::Run> DataLog::StoredRun(const PhysicalExtent& extent) {
  std::shared_ptr<Buffer> buffer = BufferHolding(extent);
  if (buffer) {
    auto run = run_buffers_.Get(extent.length);
    const uint32_t segment = buffer->segment;
    // Holding the buffer keeps its memory from being recycled meanwhile.
    std::memcpy(run->data(), buffer->data->data() + (extent.addr - sb_.SegmentOffset(segment)),
                extent.length);
    return std::make_shared<const RunBytes>(std::move(run));
  }
  auto checked = [&](const char* data, std::optional<uint32_t> known_crc) -> Status {
    if ((known_crc ? *known_crc : crc32c::Value(data, extent.length)) == extent.crc) return Status::Ok();
    return Status::Corruption("checksum mismatch in stored extent at device offset " +
                              std::to_string(extent.addr) + " (" + std::to_string(extent.length) + " bytes)");
  };
  // A device that lends what it read (a RADOS image: the reply's memory)
  // spares the copy into a buffer of ours.
  CKPTFS_ASSIGN_OR_RETURN(LentBytes lent, device_->ReadLent(extent.addr, extent.length));
  if (lent.owner) {
    if (lent.size != extent.length) return Status::IOError("a device lent a run of another length");  // a bug
    CKPTFS_RETURN_IF_ERROR(checked(lent.data, lent.crc32c));
    return std::make_shared<const RunBytes>(std::move(lent));
  }
  auto run = run_buffers_.Get(extent.length);
  // The allocation is rounded up to whole blocks, so the aligned read fits.
  CKPTFS_RETURN_IF_ERROR(
      device_->Read(extent.addr, run->data(), AlignUp(extent.length, kBlockSize)));
  CKPTFS_RETURN_IF_ERROR(checked(run->data(), std::nullopt));
  return std::make_shared<const RunBytes>(std::move(run));
}

Result<RunCache::Run> DataLog::DecodedRun(const PhysicalExtent& extent) {
  CKPTFS_ASSIGN_OR_RETURN(RunCache::Run run, read_cache_.FindOrLoad(extent.addr, extent.crc, [&] {
    return LoadDecodedRun(extent);
  }));
  if (run->size() == extent.logical_length()) return run;
  return LoadDecodedRun(extent);  // another run with the same address and checksum
}

Result<RunCache::Run> DataLog::LoadDecodedRun(const PhysicalExtent& extent) {
  CKPTFS_ASSIGN_OR_RETURN(RunCache::Run stored, StoredRun(extent));
  if (!extent.compressed()) return stored;
  auto decoded = run_buffers_.Get(extent.raw_length);
  Status s = DecodeRun(static_cast<Codec>(extent.codec), stored->data(), extent.length,
                       decoded->data(), extent.raw_length);
  if (!s.ok()) {
    return Status::Corruption("stored run at device offset " + std::to_string(extent.addr) +
                              " does not decode: " + s.ToString());
  }
  {
    MutexLock lock(&mu_);
    stats_.runs_decoded += 1;
  }
  return std::make_shared<const RunBytes>(std::move(decoded));
}

Status DataLog::Read(const PhysicalExtent& extent, uint32_t skip, void* dst, size_t len) {
  ReadView view;
  CKPTFS_RETURN_IF_ERROR(ReadInto(extent, skip, len, &view));
  view.CopyTo(static_cast<char*>(dst));
  return Status::Ok();
}

Status DataLog::ReadInto(const PhysicalExtent& extent, uint32_t skip, size_t len,
                         ReadView* view) {
  if (static_cast<uint64_t>(skip) + len > extent.logical_length()) {
    return Status::Invalid("read past the end of a stored extent");
  }
  if (!extent.compressed()) {
    // Raw data still buffered is lent straight from the buffer, without the
    // cache; appended bytes never change, and the buffer's memory is reused
    // only once nobody holds it (FlusherLoop).
    if (std::shared_ptr<Buffer> buffer = BufferHolding(extent)) {
      const char* at =
          buffer->data->data() + (extent.addr - sb_.SegmentOffset(buffer->segment)) + skip;
      view->Add(at, len, std::move(buffer));
      return Status::Ok();
    }
  }
  CKPTFS_ASSIGN_OR_RETURN(RunCache::Run run, DecodedRun(extent));
  const char* at = run->data() + skip;
  view->Add(at, len, std::move(run));
  return Status::Ok();
}

bool DataLog::Prefetch(const PhysicalExtent& extent) {
  if (!extent.compressed() && BufferHolding(extent)) return false;
  bool loaded = false;
  Result<RunCache::Run> run = read_cache_.FindOrLoad(
      extent.addr, extent.crc,
      [&] {
        loaded = true;
        return LoadDecodedRun(extent);
      },
      /*hint=*/true);
  return run.ok() && loaded;
}

Status DataLog::ReadStored(const PhysicalExtent& extent, std::string* out) {
  CKPTFS_ASSIGN_OR_RETURN(RunCache::Run run, StoredRun(extent));
  out->assign(run->data(), extent.length);
  return Status::Ok();
}

Status DataLog::Sync() {
  if (read_only_) return Status::Ok();  // nothing was appended
  std::vector<std::shared_ptr<Buffer>> sealed;
  std::vector<std::pair<std::shared_ptr<Buffer>, uint64_t>> open;  // buffer, end
  {
    MutexLock lock(&mu_);
    if (!io_error_.ok()) return io_error_;
    for (auto& [segment, buffer] : active_) {
      HoldsLockOf(*buffer);
      if (buffer->sealed) sealed.push_back(buffer);
    }
    for (auto& buffer : open_) {
      if (!buffer) continue;
      HoldsLockOf(*buffer);
      const uint64_t end = buffer->fill;
      std::shared_ptr<Buffer> b = buffer;  // open_ may change while it waits
      HoldsLockOf(*b);
      while (!b->inflight.empty() && *b->inflight.begin() < end) changed_.Wait(&mu_);
      open.emplace_back(std::move(b), end);
    }
  }
  for (auto& [buffer, end] : open) {
    CKPTFS_RETURN_IF_ERROR(WriteUpTo(buffer.get(), end, /*partial=*/true));
  }
  {
    MutexLock lock(&mu_);
    if (flushers_.empty() && !sealed.empty()) {
      return Status::IOError("data log not started: sealed segments cannot be written");
    }
    for (const auto& buffer : sealed) {
      HoldsLockOf(*buffer);
      while (io_error_.ok() && !buffer->retired) changed_.Wait(&mu_);
    }
    if (!io_error_.ok()) return io_error_;
  }
  return device_->Flush();
}

Status DataLog::Close() {
  bool run_inline = false;
  std::vector<std::thread> flushers;  // joined without the lock they take
  {
    MutexLock lock(&mu_);
    if (stopping_ && flushers_.empty() && sealed_queue_.empty()) return io_error_;
    for (auto& open : open_) {
      if (open) SealLocked(open);
    }
    stopping_ = true;
    run_inline = flushers_.empty();
    flushers.swap(flushers_);
    changed_.NotifyAll();
  }
  if (run_inline) FlusherLoop();
  for (auto& t : flushers) t.join();
  {
    MutexLock lock(&mu_);
    if (!io_error_.ok()) return io_error_;
  }
  if (read_only_) return Status::Ok();  // nothing was appended
  return device_->Flush();
}

void DataLog::SealOpen(Stream stream) {
  MutexLock lock(&mu_);
  std::shared_ptr<Buffer>& open = open_[static_cast<int>(stream)];
  if (!open) return;
  HoldsLockOf(*open);
  if (open->fill > 0) SealLocked(open);
}

DataLogStats DataLog::stats() const {
  MutexLock lock(&mu_);
  DataLogStats s = stats_;
  s.read_cache_hits = read_cache_.hits();
  s.read_cache_misses = read_cache_.misses();
  s.buffers_allocated = segment_buffers_.allocations();
  return s;
}

uint64_t DataLog::open_buffer_room(Stream stream) const {
  MutexLock lock(&mu_);
  const auto& open = open_[static_cast<int>(stream)];
  if (!open) return 0;
  HoldsLockOf(*open);
  return sb_.segment_size - open->fill;
}

uint64_t DataLog::open_buffer_room() const {
  MutexLock lock(&mu_);
  uint64_t room = 0;
  for (const auto& open : open_) {
    if (!open) continue;
    HoldsLockOf(*open);
    room += sb_.segment_size - open->fill;
  }
  return room;
}

}  // namespace ckptfs
