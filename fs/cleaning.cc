// Segment cleaning for LogStructuredFs: moves the live data out of partly
// dead segments so they can be reused, in the background when free space
// runs low and in the foreground when a write would otherwise fail.
//
// A move copies one mapped range to the cleaner's stream and re-points the
// file at the copy only if the range still maps to the same stored bytes
// when the copy is done: a user write in between wins, and the copy dies.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "log_structured_fs.h"
#include "segment/cleaning_policy.h"

namespace ckptfs {
namespace {

struct Move {
  uint64_t ino;
  uint64_t offset;
  uint64_t length;
  PhysicalExtent phys;
  uint32_t skip;
};

}  // namespace

Result<LogStructuredFs::CleanResult> LogStructuredFs::CleanOnce(size_t max_victims) {
  std::lock_guard<std::mutex> clean_lock(clean_mu_);
  // The moved data must fit in what the cleaner may allocate (everything but
  // the metadata reserve) plus the room left in its open segment.
  const SegmentUsage usage = segments_.Usage();
  const uint64_t room = (usage.free - std::min(usage.free, usage.meta_reserved)) * sb_.segment_size +
                        data_->open_buffer_room(DataLog::Stream::kCleaner);
  const std::vector<uint32_t> victims =
      PickVictims(segments_.CleaningCandidates(), sb_.segment_size, max_victims, room);
  if (victims.empty()) return CleanResult{};
  std::vector<bool> is_victim(sb_.segment_count, false);
  for (uint32_t v : victims) is_victim[v] = true;

  std::vector<Move> moves;
  {
    std::shared_lock<std::shared_mutex> lock(ns_mu_);
    for (const auto& [ino, node] : ns_.inodes()) {
      for (const auto& [offset, e] : node->extents.entries()) {
        if (is_victim[segments_.SegmentOf(e.phys.addr)]) {
          moves.push_back({ino, offset, e.length, e.phys, e.skip});
        }
      }
    }
  }
  // Device order, so the victims are read sequentially.
  std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
    return a.phys.addr != b.phys.addr ? a.phys.addr < b.phys.addr : a.skip < b.skip;
  });

  uint64_t moved = 0;
  std::string buf;
  // Still mapped as when the moves were listed? Requires ns_mu_.
  auto still_mapped = [this](const Move& m) {
    const Inode* node = ns_.Find(m.ino);
    if (!node || !node->is_regular()) return false;
    auto now = node->extents.Lookup(m.offset, m.length);
    return now.size() == 1 && !now[0].hole && now[0].phys == m.phys && now[0].skip == m.skip;
  };
  for (const Move& m : moves) {
    buf.resize(m.length);
    Status s;
    {
      // As a user read does: the range is checked and its segment pinned
      // (reclaim lock) under the namespace lock, so it cannot be freed and
      // reused between the check and the read.
      std::shared_lock<std::shared_mutex> lock(ns_mu_);
      if (!still_mapped(m)) continue;
      std::shared_lock<std::shared_mutex> reclaim(reclaim_mu_);
      lock.unlock();
      s = data_->Read(m.phys, m.skip, buf.data(), m.length);
    }
    if (!s.ok()) {
      // Damaged data stays where it is, still reported by reads and fsck.
      spdlog::warn("cleaner: cannot move inode {} bytes {}+{}: {}", m.ino, m.offset, m.length,
                   s.ToString());
      continue;
    }
    auto ticket = data_->Append(buf.data(), m.length, DataLog::Stream::kCleaner);
    if (!ticket.ok()) {
      if (!ticket.status().IsNoSpace()) return ticket.status();
      break;  // the cleaner's reserve is used up; commit what moved so far
    }
    {
      std::unique_lock<std::shared_mutex> lock(ns_mu_);
      if (still_mapped(m)) {
        CKPTFS_RETURN_IF_ERROR(Mutate(record::WriteExtent{
            m.ino, m.offset, static_cast<uint32_t>(m.length), ticket->extent(), 0, 0}));
        moved += m.length;
      }
    }
    ticket->Done();
  }
  cleaned_bytes_.fetch_add(moved);
  cleaned_segments_.fetch_add(victims.size());
  // The victims hold no live bytes now; the commit makes them free.
  CKPTFS_RETURN_IF_ERROR(Sync());
  spdlog::debug("cleaner: {} segment(s) emptied, {} live bytes moved", victims.size(), moved);
  return CleanResult{victims.size(), moved};
}

bool LogStructuredFs::SpaceIsLow() const {
  SegmentUsage u = segments_.Usage();
  const uint32_t free = u.free + u.pending_free;
  const uint32_t low_water = std::max<uint32_t>(2 * u.reserved, u.total / 10);
  return free < low_water;
}

void LogStructuredFs::CleanerLoop() {
  std::unique_lock<std::mutex> lock(bg_mu_);
  while (!stop_) {
    bg_cv_.wait_for(lock, std::chrono::milliseconds(100));
    if (stop_ || !SpaceIsLow()) continue;
    lock.unlock();
    const auto start = std::chrono::steady_clock::now();
    auto cleaned = CleanOnce(4);
    if (!cleaned.ok()) {
      spdlog::error("cleaner: {}", cleaned.status().ToString());
    } else if (options_.clean_rate_bytes > 0 && cleaned->moved > 0) {
      // Rate limit: sleep off what moving these bytes "cost" at the set rate.
      const auto budget = std::chrono::duration<double>(static_cast<double>(cleaned->moved) /
                                                        static_cast<double>(options_.clean_rate_bytes));
      std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::nanoseconds>(budget));
    }
    lock.lock();
  }
}

}  // namespace ckptfs
