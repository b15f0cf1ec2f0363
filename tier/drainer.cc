// Drainer: see drainer.h.
#include "drainer.h"

#include <spdlog/spdlog.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <cinttypes>
#include <cstdio>
#include <deque>
#include <future>
#include <optional>
#include <set>
#include <thread>

#include "published_manifest.h"
#include "util/aligned_buffer.h"
#include "util/crc32c.h"

namespace ckptfs {
namespace {

int64_t WallNanos() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

// The parts of `wanted` (sorted, disjoint) that no chunk covers.
std::vector<ByteRange> Missing(const std::vector<ByteRange>& wanted, const std::vector<ImageChunk>& have) {
  std::vector<ByteRange> out;
  size_t h = 0;
  for (const ByteRange& w : wanted) {
    uint64_t at = w.offset;
    const uint64_t end = w.offset + w.length;
    while (at < end) {
      while (h < have.size() && have[h].offset + have[h].length <= at) ++h;
      if (h == have.size() || have[h].offset >= end) {
        out.push_back({at, end - at});
        break;
      }
      if (have[h].offset > at) out.push_back({at, have[h].offset - at});
      at = std::min<uint64_t>(end, have[h].offset + have[h].length);
    }
  }
  return out;
}

// The lists' items taken in turn, one from each list that has any left: the
// first of every list, then the second of each, and so on. A segment is one
// object, and writes to one object are ordered by its placement group, all
// on one primary OSD: sent segment by segment, the 8 writes in flight were
// 8 chunks of one segment, serialised there, while the other OSDs waited.
template <typename T>
std::vector<T> TakeInTurn(std::vector<std::vector<T>> lists) {
  std::vector<T> out;
  for (size_t i = 0;; ++i) {
    const size_t before = out.size();
    for (std::vector<T>& list : lists) {
      if (i < list.size()) out.push_back(std::move(list[i]));
    }
    if (out.size() == before) return out;
  }
}

// The objects a manifest names, in both of its lists.
std::set<std::string> ObjectNames(const ImageManifest& m) {
  std::set<std::string> names;
  for (const auto* list : {&m.segments, &m.evicted}) {
    for (const ImageSegment& s : *list) names.insert(ImageManifest::ObjectName(s.segment, s.object_id));
  }
  return names;
}

// Whether `chunk` lies wholly inside `ranges` (sorted, disjoint, and
// adjacent ones merged, as a capture gives them).
bool Within(const std::vector<ByteRange>& ranges, const ImageChunk& chunk) {
  const uint64_t end = uint64_t{chunk.offset} + chunk.length;
  return std::any_of(ranges.begin(), ranges.end(), [&](const ByteRange& r) {
    return r.offset <= chunk.offset && end <= r.offset + r.length;
  });
}

std::vector<ByteRange> RangesOf(const std::vector<ImageChunk>& chunks) {
  std::vector<ByteRange> ranges;
  for (const ImageChunk& c : chunks) {
    if (!ranges.empty() && ranges.back().offset + ranges.back().length == c.offset) {
      ranges.back().length += c.length;
    } else {
      ranges.push_back({c.offset, c.length});
    }
  }
  return ranges;
}

}  // namespace

std::string Drainer::LockCookie(uint64_t store_id) {
  char cookie[32];
  std::snprintf(cookie, sizeof cookie, "store-%016" PRIx64, store_id);
  return cookie;
}

Result<std::unique_ptr<Drainer>> Drainer::Open(std::unique_ptr<RadosImage> image,
                                               CommittedImageSource* source, uint64_t store_id,
                                               const DrainOptions& options) {
  const std::string name = image->target().ToString();
  const std::string cookie = LockCookie(store_id);
  const std::string description = "ckptfs drain of store " + cookie + " on " + HostName();
  Status locked = image->Lock(ImageManifest::kLockObject, ImageManifest::kLockName, cookie, description);
  if (locked.IsBusy()) {
    // Held under our own cookie: by an earlier daemon of this very store,
    // which is dead, since this process holds the store's flock. Anyone
    // else is another writer.
    CKPTFS_ASSIGN_OR_RETURN(auto lockers, image->Lockers(ImageManifest::kLockObject, ImageManifest::kLockName));
    std::string holders;
    bool ours = !lockers.empty();
    for (const auto& l : lockers) {
      holders += (holders.empty() ? "" : ", ") + l.client + " at " + l.address + " (" + l.cookie + ")";
      ours = ours && l.cookie == cookie;
    }
    if (!ours) {
      return Status::Busy(name + " has another writer: " + holders +
                          ". If that writer is dead, `ckptfs-tier takeover " + name +
                          "` breaks its lock.");
    }
    for (const auto& l : lockers) {
      // The flock proves the holder dead only where it is one host's lock
      // (a local disk); a store on shared storage may have a predecessor
      // that is only hung, elsewhere. So it is fenced first, as a takeover
      // does, where this client may.
      Status fenced = image->Fence(l);
      if (fenced.code() == Status::Code::kPermission) {
        spdlog::warn("{}: not fencing the earlier daemon of this store: {}", name, fenced.ToString());
      } else {
        CKPTFS_RETURN_IF_ERROR(fenced);
      }
      CKPTFS_RETURN_IF_ERROR(image->BreakLock(ImageManifest::kLockObject, ImageManifest::kLockName, l));
    }
    spdlog::info("{}: took over the writer lock of an earlier daemon of this store ({})", name, holders);
    locked = image->Lock(ImageManifest::kLockObject, ImageManifest::kLockName, cookie, description);
  }
  CKPTFS_RETURN_IF_ERROR(locked);
  // Made before the claim: from here on a failure to open releases the lock
  // (~Drainer).
  const std::string owner = cookie + "/" + image->ClientName();
  std::unique_ptr<Drainer> d(new Drainer(std::move(image), source, store_id, owner, options));
  auto another_store = [&](uint64_t theirs) {
    char id[32];
    std::snprintf(id, sizeof id, "%016" PRIx64, theirs);
    return Status::Invalid(name + " holds the image of another store (" + id + ", this one is " +
                           cookie.substr(6) + "): give each store its own image name");
  };
  // Another store's image is refused before it is claimed: a writer of
  // that store whose lock was broken while it was only hung keeps it.
  auto before_claim = ReadPublishedManifest(d->image_.get());
  if (before_claim.ok() && before_claim->store_id != store_id) return another_store(before_claim->store_id);
  if (!before_claim.ok() && !before_claim.status().IsNotFound()) return before_claim.status();
  // The lock keeps out writers that ask for it; the claim also stops one
  // whose lock was broken while it was only hung, once its fence lapses or
  // where none was set: it checks the claim before a cycle sends, before it
  // removes objects, and with its publication, and each of its writes
  // checks its object's own owner (docs/design.md, "One writer"). The
  // manifest is read again after the claim, so that no publication of the
  // old writer's can come after the read that counts.
  CKPTFS_RETURN_IF_ERROR(d->image_->Claim(ImageManifest::kObject, ImageManifest::kOwnerXattr, owner));
  {
    MutexLock lock(&d->cycle_mu_);
    d->claim_checked_at_ = std::chrono::steady_clock::now();
  }
  auto decoded = ReadPublishedManifest(d->image_.get());
  if (decoded.ok()) {
    if (decoded->store_id != store_id) return another_store(decoded->store_id);
    MutexLock lock(&d->cycle_mu_);
    d->published_ = std::move(*decoded);
    d->next_object_id_ = std::max<uint64_t>(d->next_object_id_, d->published_.next_object_id);
    // Runs evicted by an earlier daemon are read from the start.
    d->UpdateViewLocked(nullptr);
    MutexLock stats_lock(&d->stats_mu_);
    d->stats_.published = true;
    d->stats_.drained_lsn = d->published_.commit_lsn;
    d->stats_.image_bytes = d->published_.StoredBytes();
  } else if (!decoded.status().IsNotFound()) {
    return decoded.status();
  }
  // Runs the store evicted live in the image it evicted them to: any other
  // image (a new one, or another of this store's) lacks their objects, or
  // holds others under the same ids.
  CKPTFS_ASSIGN_OR_RETURN(CommittedImage committed, source->CaptureCommitted());
  MutexLock lock(&d->cycle_mu_);
  for (uint64_t object : committed.remote_objects) {
    if (d->published_.FindObject(object) == nullptr) {
      return Status::Invalid("the store has runs evicted to a RADOS image that " + name + " is not (" + name +
                             " holds no object " + std::to_string(object) +
                             "): mount it with the -o tier= it was drained to");
    }
  }
  return d;
}

Drainer::Drainer(std::unique_ptr<RadosImage> image, CommittedImageSource* source, uint64_t store_id,
                 std::string owner, const DrainOptions& options)
    : image_(std::move(image)), source_(source), store_id_(store_id), owner_(std::move(owner)), options_(options),
      piece_readers_(options.reads_ahead) {
  MutexLock lock(&stats_mu_);
  stats_.target = image_->target().ToString();
}

Drainer::~Drainer() { Stop(); }

void Drainer::Start() {
  thread_.Start(options_.interval, [this] { Tick(); });
  thread_.Wake();  // the first cycle at once: a new mount may have a whole store to send
}

void Drainer::Stop() {
  // A cycle the thread is in starts no more writes, so the join below
  // waits for the writes in flight, not for all the drain is behind.
  send_deadline_.store(std::numeric_limits<int64_t>::min());
  thread_.Stop();
  MutexLock lock(&cycle_mu_);
  if (stopped_) return;
  stopped_ = true;
  if (image_->Fenced()) return;  // the lock is not ours any more, nor is any call
  Status s = image_->Unlock(ImageManifest::kLockObject, ImageManifest::kLockName, LockCookie(store_id_));
  if (!s.ok()) spdlog::warn("{}: releasing the writer lock: {}", image_->target().ToString(), s.ToString());
}

bool Drainer::DeferForBurstLocked() {
  const auto now = std::chrono::steady_clock::now();
  const uint64_t written = source_->BytesWritten();
  const double seconds = std::chrono::duration<double>(now - last_tick_).count();
  // A store running out of room needs the drain now: what it has not
  // drained it cannot evict.
  const bool busy = last_tick_.time_since_epoch().count() != 0 && seconds > 0 &&
                    options_.busy_bytes_per_second > 0 &&
                    (written - last_bytes_written_) / seconds > options_.busy_bytes_per_second &&
                    !source_->SpaceIsLow();
  last_tick_ = now;
  last_bytes_written_ = written;
  if (!busy || options_.max_deferral.count() == 0) {
    if (deferring_) {
      MutexLock lock(&stats_mu_);
      stats_.deferred_ms += std::chrono::duration_cast<std::chrono::milliseconds>(now - deferring_since_).count();
    }
    deferring_ = false;
    return false;
  }
  if (!deferring_) {
    deferring_ = true;
    deferring_since_ = now;
  }
  if (now - deferring_since_ < options_.max_deferral) return true;
  // Held back long enough: a store that never rests still gets drained.
  MutexLock lock(&stats_mu_);
  stats_.deferred_ms += std::chrono::duration_cast<std::chrono::milliseconds>(now - deferring_since_).count();
  deferring_since_ = now;
  return false;
}

void Drainer::Tick() {
  MutexLock lock(&cycle_mu_);
  // Fenced by a takeover: the image is another writer's now, and no call
  // of this client will ever succeed again.
  if (image_->Fenced()) return;
  if (DeferForBurstLocked()) return;
  if (std::chrono::steady_clock::now() < retry_at_) return;
  Status s = CycleLocked();
  if (s.ok()) {
    backoff_ = std::chrono::milliseconds(0);
    return;
  }
  NoteError(s);
  if (image_->Fenced()) {
    spdlog::error("{}: {}; this mount drains and evicts no more, and runs it evicted earlier fail to read "
                  "(a new mount of the store drains again if the image is still its)",
                  image_->target().ToString(), s.ToString());
    {
      MutexLock view_lock(&view_mu_);
      view_changed_.NotifyAll();  // a full store's writer waits for an image no more
    }
    return;
  }
  backoff_ = std::min(options_.max_backoff, std::max(2 * backoff_, std::chrono::milliseconds(200)));
  retry_at_ = std::chrono::steady_clock::now() + backoff_;
  spdlog::warn("{}: drain cycle failed, retrying in {} ms: {}", image_->target().ToString(),
               backoff_.count(), s.ToString());
}

void Drainer::NoteError(const Status& s) {
  MutexLock lock(&stats_mu_);
  ++stats_.errors;
  ++stats_.retries;
  stats_.last_error = s.ToString();
}

Status Drainer::DrainUntil(uint64_t seq, std::chrono::milliseconds timeout) {
  if (seq == 0) seq = source_->CommittedLsn();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  send_deadline_.store(deadline.time_since_epoch().count());
  struct LiftDeadline {
    std::atomic<int64_t>* deadline;
    ~LiftDeadline() { deadline->store(std::numeric_limits<int64_t>::max()); }
  } lift{&send_deadline_};
  Status last;
  while (true) {
    {
      MutexLock lock(&cycle_mu_);
      if (published_.publish_seq != 0 && published_.commit_lsn >= seq) return Status::Ok();
      if (image_->Fenced()) return Status::IOError(image_->target().ToString() + ": fenced by a takeover");
      last = CycleLocked();
      if (!last.ok()) NoteError(last);
      if (published_.publish_seq != 0 && published_.commit_lsn >= seq) return Status::Ok();
      if (image_->Fenced()) return last;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return last.ok() ? Status::Busy(image_->target().ToString() + " still behind the store after " +
                                      std::to_string(timeout.count()) + " ms")
                       : last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

Status Drainer::CycleLocked() {
  const uint64_t committed = source_->CommittedLsn();
  {
    // When the image fell behind; Stats() reads the figures live.
    MutexLock lock(&stats_mu_);
    const bool behind = !stats_.published || stats_.drained_lsn < committed || !adopted_;
    if (behind && !behind_) behind_since_ = std::chrono::steady_clock::now();
    behind_ = behind;
  }
  CKPTFS_RETURN_IF_ERROR(CollectGarbageLocked());
  if (published_.publish_seq != 0 && published_.commit_lsn >= committed && adopted_) {
    // Idle, it still looks now and then: a writer whose lock was broken
    // finds out, and stops offering the store evictions to an image that is
    // not its own any more.
    if (std::chrono::steady_clock::now() - claim_checked_at_ >= options_.idle_claim_check) {
      CKPTFS_RETURN_IF_ERROR(CheckClaimLocked());
    }
    return ScanObjectsLocked();
  }

  CKPTFS_ASSIGN_OR_RETURN(CommittedImage image, source_->CaptureCommitted());
  if (!adopted_) CKPTFS_RETURN_IF_ERROR(AdoptLocked(image));
  // The drain's own clock starts after the adoption, which reads back what
  // the image holds (adopted_bytes) and sends nothing.
  const auto sending_start = std::chrono::steady_clock::now();

  // Segments no longer in use lose their entry: when they come back it is
  // as a new incarnation, in a new object.
  std::set<uint32_t> in_image;
  for (const SegmentImage& s : image.segments) in_image.insert(s.segment);
  for (auto it = known_.begin(); it != known_.end();) {
    if (in_image.count(it->first)) {
      ++it;
      continue;
    }
    DropUnpublishedLocked(it->first, it->second);
    it = known_.erase(it);
  }

  std::vector<std::vector<Piece>> by_segment;
  uint64_t behind_bytes = 0;
  for (const SegmentImage& s : image.segments) {
    Known& k = known_[s.segment];
    if (k.object_id == 0 || k.incarnation != s.incarnation) {
      if (k.object_id != 0) DropUnpublishedLocked(s.segment, k);
      k = Known{s.incarnation, next_object_id_++, {}};
    }
    std::vector<Piece> mine;
    for (const ByteRange& r : Missing(s.ranges, k.chunks)) {
      behind_bytes += r.length;
      for (uint64_t at = r.offset; at < r.offset + r.length; at += options_.chunk_bytes) {
        mine.push_back({s.segment, at, std::min(options_.chunk_bytes, r.offset + r.length - at)});
      }
    }
    if (!mine.empty()) by_segment.push_back(std::move(mine));
  }
  std::vector<Piece> pieces = TakeInTurn(std::move(by_segment));
  {
    MutexLock lock(&stats_mu_);
    stats_.behind_bytes = behind_bytes;
  }
  // Still the image's writer? Only then are the pieces worth sending: the
  // claim of a writer that took the image over ends this one here, not at
  // the publication after a whole cycle's writes.
  if (!pieces.empty()) CKPTFS_RETURN_IF_ERROR(CheckClaimLocked());
  bool redo = false;
  Status sent = SendLocked(pieces, image.segment_size, &redo);
  if (sent.ok() && !redo) sent = PublishLocked(image);
  if (!pieces.empty()) {
    MutexLock lock(&stats_mu_);
    sending_ += std::chrono::steady_clock::now() - sending_start;
    stats_.sending_ms = std::chrono::duration_cast<std::chrono::milliseconds>(sending_).count();
  }
  CKPTFS_RETURN_IF_ERROR(sent);
  if (redo) {
    // A segment this commit needs was handed out again while we copied it
    // (a newer commit will not need it), or an object id was taken: the
    // next cycle goes on from what arrived.
    MutexLock lock(&stats_mu_);
    ++stats_.retries;
    return Status::Ok();
  }
  return ScanObjectsLocked();
}

void Drainer::DropUnpublishedLocked(uint32_t segment, const Known& k) {
  // A published object goes when a manifest no longer names it
  // (PublishLocked). One no manifest we know of named (chunks sent in a
  // cycle that a reused segment or an error cut short) would be found only
  // by the next daemon's listing: it goes the same way, with the next
  // manifest published. Not sooner: a manifest whose write timed out may
  // still have reached RADOS and name it.
  if (published_.FindObject(k.object_id) != nullptr) return;
  dropped_unpublished_.push_back(ImageManifest::ObjectName(segment, k.object_id));
}

Status Drainer::ScanObjectsLocked() {
  if (scanned_) return Status::Ok();
  CKPTFS_ASSIGN_OR_RETURN(std::vector<std::string> names, image_->List());
  // Listed while this writer still had the image: none of the names is of
  // objects a successor made (it makes them after its claim).
  CKPTFS_RETURN_IF_ERROR(CheckClaimLocked());
  std::set<std::string> named = ObjectNames(published_);
  // This writer's objects are those it made or took over. One it was yet
  // to make, found listed, is another's: a dead writer left it under the
  // id this one handed out (or this one's own first write, reported
  // failed, arrived: then it is sent again, into a new object).
  for (const auto& [segment, k] : known_) {
    if (k.ownership != Ownership::kToCreate) named.insert(ImageManifest::ObjectName(segment, k.object_id));
  }
  const auto due = std::chrono::steady_clock::now() + options_.gc_delay;
  std::set<std::string> listed;
  for (const std::string& name : names) {
    const std::optional<uint64_t> id = ImageManifest::ObjectIdOf(name);
    if (!id) continue;  // the manifest, the lock object, or not ours
    next_object_id_ = std::max(next_object_id_, *id + 1);
    listed.insert(name);
    // Written by a writer that died before naming it (or dropped by a
    // manifest whose removal it did not live to do).
    if (!named.count(name)) garbage_.push_back({due, name});
  }
  for (auto& [segment, k] : known_) {
    if (k.ownership == Ownership::kToCreate && listed.count(ImageManifest::ObjectName(segment, k.object_id))) {
      k = Known{k.incarnation, next_object_id_++, {}, Ownership::kToCreate};
    }
  }
  scanned_ = true;
  return Status::Ok();
}

Status Drainer::AdoptLocked(const CommittedImage& image) {
  uint64_t adopted = 0;
  // Chunks of any size are checked: an image drained with another write
  // size (-o drain_write, or an older default) resumes instead of being
  // sent again. None is longer than a segment.
  AlignedBuffer buf(std::min(published_.TallyChunks().largest, image.segment_size), /*zero=*/false);
  for (const SegmentImage& s : image.segments) {
    const ImageSegment* theirs = published_.Find(s.segment);
    if (!theirs || theirs->chunks.empty()) continue;
    // Only an object whose every chunk lies in what the segment's current
    // use has written: a segment handed out again still holds its older
    // bytes past that, which may match the image's chunks now and be
    // overwritten later, when no send would follow for a range the image
    // already covers. Nor is part of an object adopted: the rest would be
    // sent into it, over chunks its published manifest still names.
    const std::vector<ImageChunk>& chunks = theirs->chunks;
    if (!std::all_of(chunks.begin(), chunks.end(), [&](const ImageChunk& c) { return Within(s.ranges, c); })) {
      continue;
    }
    bool same = true;
    for (const ImageChunk& c : chunks) {
      if (c.length > buf.size() || c.offset % 4096 || c.length % 4096) {
        same = false;
        break;
      }
      CKPTFS_ASSIGN_OR_RETURN(bool unchanged, source_->ReadSegment(s.segment, s.incarnation, c.offset,
                                                                   buf.data(), c.length));
      if (!unchanged || crc32c::Value(buf.data(), c.length) != c.crc) {
        same = false;
        break;
      }
    }
    if (!same) continue;
    for (const ImageChunk& c : chunks) adopted += c.length;
    known_[s.segment] = Known{s.incarnation, theirs->object_id, chunks, Ownership::kToTakeOver};
  }
  adopted_ = true;
  MutexLock lock(&stats_mu_);
  stats_.adopted_bytes += adopted;
  if (published_.publish_seq != 0) {
    spdlog::info("{}: {} bytes of the image already match this store; the drain resumes after them",
                 image_->target().ToString(), adopted);
  }
  return Status::Ok();
}

Status Drainer::SendLocked(const std::vector<Piece>& pieces, uint64_t segment_bytes, bool* redo) {
  // 64 KiB checksum blocks: BlueStore's default blob size caps them there
  // anyway; asking for no more keeps a restore, which reads runs (4 KiB-
  // aligned, up to 1 MiB) anywhere in an object, from reading more than a
  // block extra on a cluster with larger blobs
  // (docs/tuning.md#allocation-hint).
  const RadosImage::WriteOnceHint hint{segment_bytes, 64 << 10};
  // A piece on its way from the local store: read and checksummed by
  // piece_readers_, so that the reads of the next pieces overlap each other
  // and the writes in flight. Read serially by the drain thread, they took 4
  // of the 7 s a 1.7 GB drain lasted (docs/tuning.md#drain-reads-ahead).
  struct Loaded {
    Result<bool> unchanged = false;  // false: the segment was handed out again
    std::optional<RadosImage::Payload> payload;  // when unchanged
    uint32_t crc = 0;
  };
  struct Reading {
    Piece piece;
    uint64_t object_id;
    size_t buffer;
    std::future<Loaded> loaded;
  };
  struct InFlight {
    std::unique_ptr<RadosImage::Op> op;
    Piece piece;
    uint32_t crc;
    size_t buffer;
    Ownership before;  // the object's, before this write was sent
  };
  // send_buffers_ outlives every read below, and is a deque, so that
  // adding a buffer moves none that a read is filling. A buffer goes back
  // to free_buffers when its write completes, but is filled again only
  // once librados has let go of it: a write that timed out may still be
  // queued to go. Those librados holds stay for the next cycle, up to a
  // bound, so that they are counted rather than replaced at every retry
  // while an OSD does not answer.
  std::deque<RadosImage::SendBuffer>& buffers = send_buffers_;
  std::vector<size_t> free_buffers;
  RadosImage::CompletionSignal written_signal;
  std::deque<Reading> reading;
  std::deque<InFlight> in_flight;
  std::set<uint32_t> contested;  // segments whose object refused a write for its owner
  Status failed;
  // Waits for the first write to finish, whichever it is; a chunk that
  // arrived is the image's from now on.
  auto complete_one = [&]() REQUIRES(cycle_mu_) {
    auto done = in_flight.end();
    for (;;) {
      const uint64_t seen = written_signal.completions();
      done = std::find_if(in_flight.begin(), in_flight.end(), [](const InFlight& f) { return f.op->Done(); });
      if (done != in_flight.end()) break;
      written_signal.WaitBeyond(seen);
    }
    InFlight f = std::move(*done);
    in_flight.erase(done);
    auto written = f.op->Wait();
    free_buffers.push_back(f.buffer);
    if (!written.ok()) {
      // A first write that failed may not have made or taken the object
      // over: the next one tries again, as the first.
      if (f.before != Ownership::kOwned) known_[f.piece.segment].ownership = f.before;
      if (written.status().code() == Status::Code::kExists) contested.insert(f.piece.segment);
      if (failed.ok()) failed = written.status();
      return;
    }
    std::vector<ImageChunk>& chunks = known_[f.piece.segment].chunks;
    ImageChunk c{static_cast<uint32_t>(f.piece.offset), static_cast<uint32_t>(f.piece.length), f.crc};
    chunks.insert(std::upper_bound(chunks.begin(), chunks.end(), c,
                                   [](const ImageChunk& a, const ImageChunk& b) { return a.offset < b.offset; }),
                  c);
    MutexLock lock(&stats_mu_);
    stats_.uploaded_bytes += f.piece.length;
    stats_.behind_bytes -= std::min(stats_.behind_bytes, f.piece.length);
  };
  size_t next = 0;
  const size_t reads_ahead = std::max(1u, options_.reads_ahead);
  // Pieces are cut within a segment: a write size above the segment's needs
  // no buffer larger than the largest piece.
  size_t buffer_bytes = 0;
  for (const Piece& p : pieces) buffer_bytes = std::max<size_t>(buffer_bytes, p.length);
  // A cycle with larger pieces (another drain_write) starts a new set.
  if (!buffers.empty() && buffers.front().size() < buffer_bytes) buffers.clear();
  for (size_t b = 0; b < buffers.size(); ++b) free_buffers.push_back(b);
  const size_t max_buffers = 4 * (options_.max_in_flight + reads_ahead);
  auto start_reads = [&]() REQUIRES(cycle_mu_) {
    while (next < pieces.size() && reading.size() < reads_ahead) {
      auto reusable = std::find_if(free_buffers.begin(), free_buffers.end(),
                                   [&](size_t b) REQUIRES(cycle_mu_) { return !buffers[b].InUse(); });
      if (reusable == free_buffers.end()) {
        if (buffers.size() >= max_buffers) return;  // librados holds them all
        buffers.emplace_back(buffer_bytes);
        reusable = free_buffers.insert(free_buffers.end(), buffers.size() - 1);
      }
      const Piece p = pieces[next++];
      const size_t b = *reusable;
      free_buffers.erase(reusable);
      // CycleLocked set known_ to the image's incarnation of every segment.
      const Known& k = known_[p.segment];
      RadosImage::SendBuffer* buffer = &buffers[b];
      auto load = [source = source_, p, incarnation = k.incarnation, buffer] {
        Loaded l;
        l.unchanged = source->ReadSegment(p.segment, incarnation, p.offset, buffer->data(), p.length);
        if (l.unchanged.ok() && *l.unchanged) {
          l.payload.emplace(buffer, p.length);
          l.crc = l.payload->Crc32c();
        }
        return l;
      };
      reading.push_back({p, k.object_id, b, piece_readers_.Submit(std::move(load))});
    }
  };

  while (failed.ok() && !*redo) {
    start_reads();
    if (reading.empty()) {
      if (next == pieces.size()) break;
      // No buffer to read into: a write's completion may free one.
      if (!in_flight.empty()) {
        complete_one();
        continue;
      }
      failed = Status::Busy(image_->target().ToString() + ": librados still holds " +
                            std::to_string(buffers.size()) + " buffers of writes that timed out (an OSD that "
                            "does not answer); the drain goes on once it lets go of them");
      break;
    }
    if (std::chrono::steady_clock::now().time_since_epoch().count() > send_deadline_.load()) {
      failed = Status::Busy(image_->target().ToString() + ": the time to drain ran out with " +
                            std::to_string(pieces.size() - next + reading.size()) + " pieces still to send");
      break;
    }
    Reading r = std::move(reading.front());
    reading.pop_front();
    Loaded l = r.loaded.get();
    if (!l.unchanged.ok() || !*l.unchanged) {
      free_buffers.push_back(r.buffer);
      if (!l.unchanged.ok()) failed = l.unchanged.status();
      else *redo = true;
      break;
    }
    if (in_flight.size() >= options_.max_in_flight) {
      complete_one();
      if (!failed.ok()) {
        free_buffers.push_back(r.buffer);
        break;
      }
    }
    // A writer that stalled here (hung, stopped, its host paused) may have
    // had its lock broken and its image taken over meanwhile: each write
    // shows it is the object's owner's (WriteAsLocked), so a successor's
    // objects refuse it.
    Known& k = known_[r.piece.segment];
    std::string from;
    auto as = WriteAsLocked(r.piece.segment, k, &from);
    if (!as.ok()) {
      if (as.status().code() == Status::Code::kExists) contested.insert(r.piece.segment);
      failed = as.status();
      free_buffers.push_back(r.buffer);
      break;
    }
    const Ownership before = k.ownership;
    // The writes after this one go as the owner's: RADOS applies one
    // client's operations on an object in the order they were sent.
    k.ownership = Ownership::kOwned;
    in_flight.push_back({image_->StartWrite(ImageManifest::ObjectName(r.piece.segment, r.object_id),
                                            std::move(*l.payload), r.piece.offset, hint, *as, &written_signal),
                         r.piece, l.crc, r.buffer, before});
  }
  // Abandoned reads: their bytes are not sent, and get() drops their
  // payloads' references, so that only librados' own keep a buffer below.
  for (Reading& r : reading) (void)r.loaded.get();
  while (!in_flight.empty()) complete_one();
  // Only the buffers librados still holds stay, to be counted next cycle;
  // the rest would sit idle between drains (about 20 MiB a mount).
  std::erase_if(buffers, [](const RadosImage::SendBuffer& b) { return !b.InUse(); });
  {
    MutexLock lock(&stats_mu_);
    stats_.held_send_buffers = buffers.size();
  }
  if (contested.empty() || failed.code() != Status::Code::kExists) return failed;
  CKPTFS_RETURN_IF_ERROR(SettleContestedLocked(contested));
  *redo = true;  // with the objects settled, the next cycle sends again
  return Status::Ok();
}

Result<RadosImage::WriteAs> Drainer::WriteAsLocked(uint32_t segment, const Known& k, std::string* from) {
  RadosImage::WriteAs as{RadosImage::WriteAs::Mode::kOwner, ImageManifest::kOwnerXattr, owner_};
  switch (k.ownership) {
    case Ownership::kOwned:
      return as;
    case Ownership::kToCreate:
      as.mode = RadosImage::WriteAs::Mode::kCreate;
      return as;
    case Ownership::kToTakeOver: {
      // Looked up before the claim is checked: while the manifest still
      // names this writer, no successor has taken the object, so the owner
      // found is a previous writer's, and a successor's taking it between
      // here and the write refuses the write.
      const std::string name = ImageManifest::ObjectName(segment, k.object_id);
      auto owner = image_->Owner(name, ImageManifest::kOwnerXattr);
      if (!owner.ok() && owner.status().IsNotFound()) {
        // The published image named it, and it is gone: contested, so
        // that the segment gets a new object (SettleContestedLocked).
        return Status::Exists(image_->target().ToString() + " has lost " + name + ", which its manifest names");
      }
      if (!owner.ok()) return owner.status();
      *from = std::move(*owner);
      CKPTFS_RETURN_IF_ERROR(CheckClaimLocked());
      as.mode = RadosImage::WriteAs::Mode::kTakeOver;
      as.from = *from;
      return as;
    }
  }
  return as;
}

Status Drainer::SettleContestedLocked(const std::set<uint32_t>& segments) {
  const auto due = std::chrono::steady_clock::now() + options_.gc_delay;
  for (uint32_t segment : segments) {
    Known& k = known_[segment];
    const std::string name = ImageManifest::ObjectName(segment, k.object_id);
    auto owner = image_->Owner(name, ImageManifest::kOwnerXattr);
    if (!owner.ok() && !owner.status().IsNotFound()) return owner.status();
    // This writer's own first write, reported failed (timed out), arrived.
    if (owner.ok() && *owner == owner_) {
      k.ownership = Ownership::kOwned;
      continue;
    }
    // Another's: a successor's, if the manifest names one.
    CKPTFS_RETURN_IF_ERROR(CheckClaimLocked());
    // Else an adopted object since lost, or one a dead writer left under
    // the id this one handed out. Not this writer's to fill: the segment
    // gets a new object. For the latter, the listing, if it has not run,
    // moves ids past every object there and sends this one to the garbage
    // (ScanObjectsLocked); after it, it goes there now, unless a published
    // manifest names it.
    if (!owner.ok() || scanned_) {
      if (owner.ok() && published_.FindObject(k.object_id) == nullptr) garbage_.push_back({due, name});
      k = Known{k.incarnation, next_object_id_++, {}, Ownership::kToCreate};
    } else {
      k = Known{k.incarnation, k.object_id, {}, Ownership::kToCreate};
    }
  }
  return ScanObjectsLocked();
}

Status Drainer::PublishLocked(const CommittedImage& image) {
  ImageManifest next;
  next.store_id = image.store_id;
  next.publish_seq = published_.publish_seq + 1;
  next.commit_lsn = image.commit_lsn;
  next.published_ns = WallNanos();
  next.next_object_id = next_object_id_;
  next.superblock = image.superblock;
  std::set<uint64_t> local_objects;
  for (const SegmentImage& s : image.segments) {
    const Known& k = known_[s.segment];
    next.segments.push_back(ImageSegment{s.segment, k.object_id, k.chunks});
    local_objects.insert(k.object_id);
  }
  // Objects the commit points at by remote address: each was published
  // before its runs were evicted, as a segment entry or already evicted.
  for (uint64_t object : image.remote_objects) {
    if (local_objects.count(object)) continue;  // evicted after the capture
    const ImageSegment* held = published_.FindObject(object);
    if (held == nullptr) {
      return Status::Corruption("the store points at tier object " + std::to_string(object) +
                                ", which no published image of " + image_->target().ToString() +
                                " holds");
    }
    next.evicted.push_back(*held);
  }
  std::sort(next.evicted.begin(), next.evicted.end(),
            [](const ImageSegment& a, const ImageSegment& b) { return a.object_id < b.object_id; });
  CKPTFS_RETURN_IF_ERROR(
      image_->WriteWholeIfOwner(ImageManifest::kObject, next.Encode(), ImageManifest::kOwnerXattr, owner_));

  // What the new manifest no longer names goes, after the grace period.
  const std::set<std::string> named = ObjectNames(next);
  const auto due = std::chrono::steady_clock::now() + options_.gc_delay;
  for (const std::string& name : ObjectNames(published_)) {
    if (!named.count(name)) garbage_.push_back({due, name});
  }
  for (std::string& name : dropped_unpublished_) {
    if (!named.count(name)) garbage_.push_back({due, std::move(name)});
  }
  dropped_unpublished_.clear();
  published_ = std::move(next);
  UpdateViewLocked(&image);
  MutexLock lock(&stats_mu_);
  stats_.published = true;
  stats_.drained_lsn = published_.commit_lsn;
  stats_.image_bytes = published_.StoredBytes();
  ++stats_.manifests_published;
  stats_.last_error.clear();
  if (stats_.drained_lsn >= source_->CommittedLsn()) behind_ = false;
  return Status::Ok();
}

Status Drainer::CollectGarbageLocked() {
  const auto now = std::chrono::steady_clock::now();
  std::set<std::string> due_once;  // an object may be in the garbage twice
  for (const auto& [when, oid] : garbage_) {
    if (when <= now) due_once.insert(oid);
  }
  if (due_once.empty()) return Status::Ok();
  const std::vector<std::string> due(due_once.begin(), due_once.end());
  // Each due object's owner, looked up before the claim is checked: while
  // the manifest still names this writer no successor has made anything,
  // so a removal that holds to that owner cannot take an object a
  // successor made under the same name since (after a removal of this
  // writer's that timed out and yet arrived, say).
  std::vector<Result<std::string>> owners = image_->Owners(due, ImageManifest::kOwnerXattr);
  std::vector<RadosImage::OwnedObject> owned;
  std::set<std::string> gone;
  std::optional<Status> lookup_failed;  // the first, for the log: the rest of the batch was not tried
  for (size_t i = 0; i < due.size(); ++i) {
    if (owners[i].ok()) {
      owned.push_back({due[i], std::move(*owners[i])});
    } else if (owners[i].status().IsNotFound()) {
      gone.insert(due[i]);
    } else if (!lookup_failed) {
      lookup_failed = owners[i].status();
    }
  }
  if (lookup_failed) {
    spdlog::warn("{}: looking up garbage: {} (will retry)", image_->target().ToString(), lookup_failed->ToString());
  }
  // Not for a writer whose image was taken over.
  if (!owned.empty()) CKPTFS_RETURN_IF_ERROR(CheckClaimLocked());
  const std::vector<Status> removals = image_->RemoveIfOwners(owned, ImageManifest::kOwnerXattr);
  uint64_t removed = 0;
  bool remove_failed = false;
  for (size_t i = 0; i < owned.size(); ++i) {
    const Status& s = removals[i];
    if (s.code() == Status::Code::kExists) {
      spdlog::warn("{}: not removing {}: {}", image_->target().ToString(), owned[i].oid, s.ToString());
    } else if (!s.ok()) {
      // The first failure; the rest of the batch was not tried.
      if (!remove_failed) spdlog::warn("{}: removing garbage: {} (will retry)", image_->target().ToString(), s.ToString());
      remove_failed = true;
      continue;
    } else {
      ++removed;
    }
    gone.insert(owned[i].oid);
  }
  std::erase_if(garbage_, [&](const auto& g) { return g.first <= now && gone.count(g.second); });
  if (removed == 0) return Status::Ok();
  MutexLock lock(&stats_mu_);
  stats_.objects_removed += removed;
  return Status::Ok();
}

Status Drainer::CheckClaimLocked() {
  CKPTFS_RETURN_IF_ERROR(image_->CheckOwner(ImageManifest::kObject, ImageManifest::kOwnerXattr, owner_));
  claim_checked_at_ = std::chrono::steady_clock::now();
  return Status::Ok();
}

void Drainer::UpdateViewLocked(const CommittedImage* image) {
  std::map<uint32_t, HeldSegment> segments;
  if (image != nullptr) {
    for (const SegmentImage& s : image->segments) {
      const ImageSegment* held = published_.Find(s.segment);
      if (held == nullptr) continue;
      segments[s.segment] = HeldSegment{s.incarnation, RemoteSegment{held->object_id, RangesOf(held->chunks)}};
    }
  }
  std::map<uint64_t, uint32_t> objects;
  for (const auto* list : {&published_.segments, &published_.evicted}) {
    for (const ImageSegment& s : *list) objects[s.object_id] = s.segment;
  }
  MutexLock lock(&view_mu_);
  view_segments_ = std::move(segments);
  view_objects_ = std::move(objects);
  ++view_seq_;
  view_changed_.NotifyAll();
}

uint64_t Drainer::ImageSeq() {
  MutexLock lock(&view_mu_);
  return view_seq_;
}

bool Drainer::WaitForNewerImage(uint64_t seen, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&view_mu_);
  while (view_seq_ <= seen) {
    if (image_->Fenced()) return false;  // no image will come
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    view_changed_.WaitFor(&view_mu_, deadline - now);
  }
  return true;
}

std::optional<RemoteSegment> Drainer::Published(uint32_t segment, uint64_t incarnation) {
  // A fenced client can read nothing back: evicting to it would lose the
  // local copy of what it can no longer serve.
  if (image_->Fenced()) return std::nullopt;
  MutexLock lock(&view_mu_);
  auto it = view_segments_.find(segment);
  if (it == view_segments_.end() || it->second.incarnation != incarnation) return std::nullopt;
  return it->second.where;
}

Status Drainer::ReadRemote(uint64_t object, uint64_t offset, void* buf, size_t len) {
  uint32_t segment = 0;
  {
    MutexLock lock(&view_mu_);
    auto it = view_objects_.find(object);
    if (it == view_objects_.end()) {
      return Status::IOError(image_->target().ToString() + " holds no object " + std::to_string(object) +
                             " for an evicted run");
    }
    segment = it->second;
  }
  char* out = static_cast<char*>(buf);
  CKPTFS_ASSIGN_OR_RETURN(size_t n, image_->Read(ImageManifest::ObjectName(segment, object), out, len, offset));
  // The object ends at the last chunk sent; the block-aligned read may ask
  // for bytes past it, which were never written.
  if (n < len) std::memset(out + n, 0, len - n);
  return Status::Ok();
}

DrainStats Drainer::Stats() const {
  MutexLock lock(&stats_mu_);
  DrainStats s = stats_;
  // Live, so that a caller who just committed sees its own commit counted.
  s.committed_lsn = source_->CommittedLsn();
  s.fenced = image_->Fenced();
  const bool behind = !s.published || s.drained_lsn < s.committed_lsn;
  s.behind_ms = behind && behind_ ? std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::steady_clock::now() - behind_since_).count()
                                  : 0;
  if (!behind) s.behind_bytes = 0;
  return s;
}

}  // namespace ckptfs
