// SegmentTable implementation. Allocation walks forward from the last
// segment handed out, so successive segments land in ascending device order.
#include "segment/segment_table.h"

#include <algorithm>
#include <cassert>

namespace ckptfs {

namespace {

// How long a segment the filesystem under the store had no room for is left
// alone before it is asked for again (someone may have freed space there).
constexpr auto kUnprovisionedRetry = std::chrono::seconds(10);

}  // namespace

SegmentTable::SegmentTable(const Superblock& sb, Provisioner provision)
    : segment_size_(sb.segment_size),
      data_start_(sb.data_start),
      meta_reserve_(std::max<uint32_t>(2, sb.segment_count / 64)),
      clean_reserve_(std::max<uint32_t>(2, sb.segment_count / 128)),
      provision_(std::move(provision)),
      segments_(sb.segment_count) {}

void SegmentTable::FinishReplay(const std::vector<uint32_t>& meta_segments) {
  MutexLock lock(&mu_);
  for (uint32_t s : meta_segments) segments_[s].state = SegmentState::kMeta;
  free_count_ = 0;
  pending_free_count_ = 0;
  retired_count_ = 0;
  uint32_t last_used = 0;
  for (uint32_t i = 0; i < segments_.size(); ++i) {
    Info& info = segments_[i];
    info.pending_free = false;
    info.retired_epoch = 0;
    if (info.state != SegmentState::kMeta) {
      info.state = info.refs > 0 ? SegmentState::kData : SegmentState::kFree;
    }
    if (info.state == SegmentState::kFree) ++free_count_;
    else last_used = i;
  }
  cursor_ = last_used;
  // Every release replayed is committed.
  std::erase_if(remote_, [](const auto& entry) { return entry.second.refs == 0; });
}

Result<uint32_t> SegmentTable::TakeFreeLocked(uint32_t keep_free, SegmentState as) {
  ReuseRetiredLocked();
  const auto now = std::chrono::steady_clock::now();
  if (unprovisioned_count_ > 0 && now - unprovisioned_since_ >= kUnprovisionedRetry) {
    for (Info& info : segments_) info.unprovisioned = false;
    unprovisioned_count_ = 0;
  }
  const uint32_t n = static_cast<uint32_t>(segments_.size());
  for (uint32_t step = 1; step <= n; ++step) {
    // Segments the filesystem under the store has no room for are not free
    // to anyone, reserves included.
    const uint32_t usable = free_count_ - unprovisioned_count_;
    if (usable <= keep_free) {
      return Status::NoSpace("no free segment (" + std::to_string(usable) + " free, " +
                             std::to_string(keep_free) + " reserved" +
                             (unprovisioned_count_ ? ", " + std::to_string(unprovisioned_count_) +
                                                         " with no room under the sparse store"
                                                   : std::string()) +
                             ")");
    }
    const uint32_t s = (cursor_ + step) % n;
    Info& info = segments_[s];
    if (info.state != SegmentState::kFree || info.unprovisioned) continue;
    if (provision_) {
      Status provisioned = provision_(s);
      if (provisioned.IsNoSpace()) {
        info.unprovisioned = true;
        if (unprovisioned_count_++ == 0) unprovisioned_since_ = now;
        continue;
      }
      CKPTFS_RETURN_IF_ERROR(provisioned);
    }
    info = Info{};
    info.state = as;
    --free_count_;
    cursor_ = s;
    return s;
  }
  return Status::NoSpace("free count says free, table says none");  // unreachable
}

uint32_t SegmentTable::PromisedSegmentsLocked() const {
  const uint64_t promised = pending_reserved_ + fallocated_;
  if (promised == 0) return 0;
  // One more than the bytes need: the run may not fit the open buffer's rest.
  return static_cast<uint32_t>((promised + segment_size_ - 1) / segment_size_) + 1;
}

Result<uint32_t> SegmentTable::AllocateData(Requester who) {
  MutexLock lock(&mu_);
  uint32_t keep = meta_reserve_;
  if (who != Requester::kCleaner) keep += clean_reserve_;
  if (who == Requester::kUser) keep += PromisedSegmentsLocked();
  CKPTFS_ASSIGN_OR_RETURN(uint32_t s, TakeFreeLocked(keep, SegmentState::kData));
  segments_[s].active = true;
  segments_[s].by_cleaner = who == Requester::kCleaner;
  return s;
}

Result<uint32_t> SegmentTable::AllocateMeta() {
  MutexLock lock(&mu_);
  return TakeFreeLocked(0, SegmentState::kMeta);
}

void SegmentTable::FreeMeta(const std::vector<uint32_t>& segments) {
  MutexLock lock(&mu_);
  for (uint32_t s : segments) {
    if (segments_[s].state != SegmentState::kMeta) continue;
    segments_[s] = Info{};
    ++free_count_;
  }
}

void SegmentTable::Deactivate(uint32_t segment) {
  MutexLock lock(&mu_);
  segments_[segment].active = false;
  segments_[segment].written_seq = ++write_seq_;
  MaybeRetireLocked(segment);
}

void SegmentTable::MaybeRetireLocked(uint32_t segment) {
  Info& info = segments_[segment];
  if (info.state == SegmentState::kData && info.refs == 0 && !info.active && !info.pending_free) {
    info.pending_free = true;
    ++pending_free_count_;
    info.died_seq = record_seq_;
  }
}

void SegmentTable::AddLiveLocked(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes,
                                 uint64_t* live) {
  if (!phys.compressed()) {
    *live += raw_refs_.Add(phys.addr + skip, bytes);
  } else if (uint64_t& run = compressed_refs_[phys.addr]; (run += bytes) == bytes) {
    *live += phys.length;  // the run's first reference
  }
}

void SegmentTable::RemoveLiveLocked(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes,
                                    uint64_t* live) {
  if (!phys.compressed()) {
    *live -= std::min(*live, raw_refs_.Remove(phys.addr + skip, bytes));
  } else if (auto it = compressed_refs_.find(phys.addr); it != compressed_refs_.end()) {
    it->second -= std::min(it->second, bytes);
    if (it->second == 0) {  // the run's last reference
      *live -= std::min<uint64_t>(*live, phys.length);
      compressed_refs_.erase(it);
    }
  }
}

void SegmentTable::Referenced(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes) {
  if (phys.pending()) return;
  MutexLock lock(&mu_);
  if (phys.reserved()) {
    fallocated_ += bytes;
    return;
  }
  if (phys.remote()) {
    RemoteObject& object = remote_[phys.remote_object()];
    object.refs += bytes;
    AddLiveLocked(phys, skip, bytes, &object.live);
    return;
  }
  Info& info = segments_[SegmentOf(phys.addr)];
  info.refs += bytes;
  AddLiveLocked(phys, skip, bytes, &info.live);
  // A reference revives a segment that was waiting to be freed (replay of a
  // later write into the same incarnation).
  if (info.pending_free) --pending_free_count_;
  if (info.retired_epoch != 0) --retired_count_;
  info.pending_free = false;
  info.retired_epoch = 0;
}

void SegmentTable::Released(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes) {
  if (phys.pending()) return;
  MutexLock lock(&mu_);
  if (phys.reserved()) {
    fallocated_ -= std::min(fallocated_, bytes);
    return;
  }
  if (phys.remote()) {
    auto it = remote_.find(phys.remote_object());
    if (it == remote_.end()) return;
    RemoteObject& object = it->second;
    object.refs -= std::min(object.refs, bytes);
    RemoveLiveLocked(phys, skip, bytes, &object.live);
    if (object.refs == 0) object.died_seq = record_seq_;
    return;
  }
  uint32_t s = SegmentOf(phys.addr);
  Info& info = segments_[s];
  info.refs -= std::min(info.refs, bytes);
  RemoveLiveLocked(phys, skip, bytes, &info.live);
  MaybeRetireLocked(s);
}

void SegmentTable::NoteRecord(uint64_t seq) {
  MutexLock lock(&mu_);
  record_seq_ = seq;
}

void SegmentTable::CommitDurable(uint64_t seq) {
  MutexLock lock(&mu_);
  // A tier object nothing committed points at any more leaves the images.
  std::erase_if(remote_, [seq](const auto& entry) {
    return entry.second.refs == 0 && entry.second.died_seq <= seq;
  });
  if (pending_free_count_ == retired_count_) return;
  const uint64_t epoch = pins_.Advance();
  for (Info& info : segments_) {
    if (info.pending_free && info.retired_epoch == 0 && info.died_seq <= seq && info.refs == 0 &&
        !info.active) {
      info.retired_epoch = epoch;
      ++retired_count_;
    }
  }
  ReuseRetiredLocked();
}

void SegmentTable::ReuseRetiredLocked() {
  if (retired_count_ == 0) return;
  const uint64_t oldest = pins_.OldestPinned();
  for (Info& info : segments_) {
    if (info.retired_epoch != 0 && info.retired_epoch <= oldest) {
      info = Info{};
      ++free_count_;
      --pending_free_count_;
      --retired_count_;
    }
  }
}

std::vector<SegmentSummary> SegmentTable::CleaningCandidates() const {
  MutexLock lock(&mu_);
  std::vector<SegmentSummary> out;
  for (uint32_t i = 0; i < segments_.size(); ++i) {
    const Info& info = segments_[i];
    if (info.state != SegmentState::kData || info.active || info.pending_free) continue;
    out.push_back({i, info.live, write_seq_ - info.written_seq, info.by_cleaner});
  }
  return out;
}

uint32_t SegmentTable::PendingFree() const {
  MutexLock lock(&mu_);
  return pending_free_count_ - retired_count_;
}

Status SegmentTable::ReservePending(uint64_t bytes) {
  MutexLock lock(&mu_);
  pending_reserved_ += bytes;
  // As in TakeFreeLocked: a segment the filesystem under a sparse store had
  // no room for cannot keep the promise.
  const uint32_t usable = free_count_ - unprovisioned_count_;
  if (usable < meta_reserve_ + clean_reserve_ + PromisedSegmentsLocked()) {
    pending_reserved_ -= bytes;
    return Status::NoSpace("no room to promise to a compressed write");
  }
  return Status::Ok();
}

uint64_t SegmentTable::PromisableBytes() const {
  MutexLock lock(&mu_);
  const uint64_t usable = free_count_ + pending_free_count_ - unprovisioned_count_;
  // ReservePending's rule: the reserves stay, and a promise keeps one
  // segment more than its bytes need.
  const uint64_t keep = meta_reserve_ + clean_reserve_ + 1;
  if (usable <= keep) return 0;
  const uint64_t room = (usable - keep) * segment_size_;
  const uint64_t promised = pending_reserved_ + fallocated_;
  return room - std::min(room, promised);
}

void SegmentTable::ReleasePending(uint64_t bytes) {
  MutexLock lock(&mu_);
  pending_reserved_ -= std::min(pending_reserved_, bytes);
}

uint64_t SegmentTable::CompressedRunRefs(const PhysicalExtent& phys) const {
  MutexLock lock(&mu_);
  auto it = compressed_refs_.find(phys.addr);
  return it == compressed_refs_.end() ? 0 : it->second;
}

std::vector<uint32_t> SegmentTable::DataSegmentsInUse() const {
  MutexLock lock(&mu_);
  std::vector<uint32_t> in_use;
  for (uint32_t s = 0; s < segments_.size(); ++s) {
    const Info& info = segments_[s];
    if (info.state == SegmentState::kData && info.retired_epoch == 0) in_use.push_back(s);
  }
  return in_use;
}

std::vector<uint64_t> SegmentTable::RemoteObjectsInUse() const {
  MutexLock lock(&mu_);
  std::vector<uint64_t> in_use;
  for (const auto& [object, info] : remote_) in_use.push_back(object);
  std::sort(in_use.begin(), in_use.end());
  return in_use;
}

bool SegmentTable::SpaceIsLow() const {
  MutexLock lock(&mu_);
  const uint32_t reserved = meta_reserve_ + clean_reserve_;
  const uint32_t low_water =
      std::max<uint32_t>(2 * reserved, static_cast<uint32_t>(segments_.size()) / 10);
  return free_count_ + pending_free_count_ < low_water;
}

SegmentUsage SegmentTable::Usage() const {
  MutexLock lock(&mu_);
  SegmentUsage u;
  u.total = static_cast<uint32_t>(segments_.size());
  u.reserved = meta_reserve_ + clean_reserve_;
  u.meta_reserved = meta_reserve_;
  u.pending_reserved_bytes = pending_reserved_;
  u.fallocated_bytes = fallocated_;
  u.shared_bytes = raw_refs_.SharedBytes();
  for (const Info& info : segments_) {
    switch (info.state) {
      case SegmentState::kFree: ++u.free; break;
      case SegmentState::kData: ++u.data; break;
      case SegmentState::kMeta: ++u.meta; break;
    }
    if (info.pending_free) ++u.pending_free;
    u.live_bytes += info.live;
    u.live_file_bytes += info.refs;
  }
  for (const auto& [object, info] : remote_) {
    if (info.refs > 0) ++u.remote_objects;
    u.remote_live_bytes += info.live;
    u.remote_file_bytes += info.refs;
  }
  assert(u.pending_free == pending_free_count_ && "the counter mirrors the flags");
  return u;
}

}  // namespace ckptfs
