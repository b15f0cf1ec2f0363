// Evictor implementation.
#include "clean/evictor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <vector>

#include "ckptfs/remote_tier.h"
#include "meta/namespace.h"

namespace ckptfs {
namespace {

struct Victim {
  uint64_t incarnation = 0;
  RemoteSegment held;        // where the tier holds that incarnation
  uint64_t live_bytes = 0;
  bool held_whole = true;    // every run in it lies in `held.ranges`
};

bool Covers(const std::vector<ByteRange>& ranges, uint64_t offset, uint64_t length) {
  return std::any_of(ranges.begin(), ranges.end(), [&](const ByteRange& r) {
    return r.offset <= offset && offset + length <= r.offset + r.length;
  });
}

}  // namespace

uint64_t Evictor::TierImage() {
  uint64_t seq = 0;
  routing_->WithTier([&](RemoteTier* tier) { seq = tier != nullptr ? tier->ImageSeq() : 0; });
  return seq;
}

bool Evictor::WaitForTier(uint64_t seen, std::chrono::milliseconds timeout) {
  bool newer = false;
  // Held shared across the wait: the tier is detached only at unmount,
  // when no writer waits any more.
  routing_->WithTier(
      [&](RemoteTier* tier) { newer = tier != nullptr && tier->WaitForNewerImage(seen, timeout); });
  return newer;
}

Result<size_t> Evictor::EvictOnce(size_t max_victims) {
  MutexLock pass(&pass_mu_);
  std::vector<SegmentSummary> candidates = segments_->CleaningCandidates();
  std::sort(candidates.begin(), candidates.end(),
            [](const SegmentSummary& a, const SegmentSummary& b) { return a.age > b.age; });
  std::map<uint32_t, Victim> victims;
  routing_->WithTier([&](RemoteTier* tier) {
    if (tier == nullptr) return;
    for (const SegmentSummary& c : candidates) {
      if (victims.size() >= max_victims) break;
      const uint64_t incarnation = tracking_->Incarnation(c.segment);
      // An object id past what a remote address can name is never used.
      if (auto held = tier->Published(c.segment, incarnation);
          held && held->object >= 1 && held->object <= PhysicalExtent::kMaxRemoteObject) {
        victims[c.segment] = Victim{incarnation, std::move(*held), c.live_bytes};
      }
    }
  });
  if (victims.empty()) return 0;

  std::vector<MappedRun> runs;
  {
    ReaderLock lock(journal_->mu());
    for (const auto& [ino, node] : journal_->ns().inodes()) {
      for (const auto& [offset, e] : node->extents.entries()) {
        if (e.phys.local() && victims.count(segments_->SegmentOf(e.phys.addr))) {
          runs.push_back({ino, offset, e.length, e.phys, e.skip});
        }
      }
    }
  }
  // A run the image lacks (written after it was captured) keeps its
  // segment here.
  for (const MappedRun& run : runs) {
    const uint32_t segment = segments_->SegmentOf(run.phys.addr);
    Victim& v = victims[segment];
    v.held_whole = v.held_whole &&
                   Covers(v.held.ranges, run.phys.addr - sb_.SegmentOffset(segment), run.phys.length);
  }
  uint64_t repointed = 0;
  {
    WriterLock lock(journal_->mu());
    for (const MappedRun& run : runs) {
      const uint32_t segment = segments_->SegmentOf(run.phys.addr);
      Victim& v = victims[segment];
      // A run no file maps any more keeps nothing here.
      if (!v.held_whole || !journal_->ns().StillMaps(run)) continue;
      // The incarnation cannot change while the file maps the run (the
      // segment is live), but check it: a re-used segment's bytes are not
      // the tier's, and the segment stays.
      if (tracking_->Incarnation(segment) != v.incarnation) {
        v.held_whole = false;
        continue;
      }
      PhysicalExtent remote = run.phys;
      remote.addr =
          PhysicalExtent::RemoteAddress(v.held.object, run.phys.addr - sb_.SegmentOffset(segment));
      CKPTFS_RETURN_IF_ERROR(journal_->Apply(record::WriteExtent{
          run.ino, run.offset, static_cast<uint32_t>(run.length), remote, run.skip, 0}));
      ++repointed;
    }
  }
  // What was given up: segments none of whose runs stayed local.
  size_t evicted = 0;
  uint64_t bytes = 0;
  for (const auto& [segment, v] : victims) {
    if (!v.held_whole) continue;
    ++evicted;
    bytes += v.live_bytes;
  }
  // The segments hold no live run now; the commit makes them free. Nothing
  // re-pointed, nothing to commit.
  if (repointed > 0) CKPTFS_RETURN_IF_ERROR(journal_->CommitNow());
  evicted_segments_.fetch_add(evicted);
  evicted_runs_.fetch_add(repointed);
  evicted_bytes_.fetch_add(bytes);
  spdlog::debug("evictor: {} segment(s) given up to the tier, {} runs re-pointed", evicted,
                repointed);
  return evicted;
}

}  // namespace ckptfs
