// Segment cleaning for LogStructuredFs: moves the live data out of partly
// dead segments so they can be reused, in the background when free space
// runs low and in the foreground when a write would otherwise fail.
//
// A move copies one mapped range to the cleaner's stream and re-points the
// file at the copy only if the range still maps to the same stored bytes
// when the copy is done: a user write in between wins, and the copy dies.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

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
  // Less what is promised to writes waiting for a compressor.
  const uint64_t free_bytes =
      (usage.free - std::min(usage.free, usage.meta_reserved)) * sb_.segment_size;
  const uint64_t room = free_bytes - std::min(free_bytes, usage.pending_reserved_bytes) +
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
        if (!e.phys.pending() && is_victim[segments_.SegmentOf(e.phys.addr)]) {
          moves.push_back({ino, offset, e.length, e.phys, e.skip});
        }
      }
    }
  }
  // Device order, so the victims are read sequentially.
  std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
    return a.phys.addr != b.phys.addr ? a.phys.addr < b.phys.addr : a.skip < b.skip;
  });

  uint64_t moved = 0;         // file bytes re-pointed
  uint64_t stored_moved = 0;  // bytes copied (a whole run may hold dead ones)
  bool out_of_room = false;
  std::string buf;
  // Still mapped as when the moves were listed? Requires ns_mu_.
  auto still_mapped = [this](const Move& m) {
    const Inode* node = ns_.Find(m.ino);
    if (!node || !node->is_regular()) return false;
    auto now = node->extents.Lookup(m.offset, m.length);
    return now.size() == 1 && !now[0].hole && now[0].phys == m.phys && now[0].skip == m.skip;
  };
  // A compressed run that is mostly live moves whole and still encoded: one
  // copy serves every move out of it. One that is mostly dead has its live
  // pieces moved decoded (raw), so its dead bytes are reclaimed.
  std::optional<DataLog::Ticket> run_copy;
  PhysicalExtent run_copied_from;
  for (const Move& m : moves) {
    const bool whole_run =
        m.phys.compressed() && 2 * segments_.CompressedRunRefs(m.phys) >= m.phys.raw_length;
    // Moves are in device order, so a run's moves are adjacent; its ticket
    // goes as soon as they are done (a held ticket keeps a buffer unflushed).
    if (run_copy && !(whole_run && run_copied_from == m.phys)) run_copy.reset();
    std::optional<DataLog::Ticket> piece_copy;
    if (!whole_run || !run_copy) {
      Status s;
      {
        // As a user read does: the range is checked and its segment pinned
        // (reclaim lock) under the namespace lock, so it cannot be freed and
        // reused between the check and the read.
        std::shared_lock<std::shared_mutex> lock(ns_mu_);
        if (!still_mapped(m)) continue;
        std::shared_lock<std::shared_mutex> reclaim(reclaim_mu_);
        lock.unlock();
        if (whole_run) {
          s = data_->ReadStored(m.phys, &buf);
        } else {
          buf.resize(m.length);
          s = data_->Read(m.phys, m.skip, buf.data(), m.length);
        }
      }
      if (!s.ok()) {
        // Damaged data stays where it is, still reported by reads and fsck.
        spdlog::warn("cleaner: cannot move inode {} bytes {}+{}: {}", m.ino, m.offset, m.length,
                     s.ToString());
        continue;
      }
      const RunCoding coding = whole_run ? RunCoding{m.phys.codec, m.phys.raw_length} : RunCoding{};
      auto ticket = data_->Append(buf.data(), buf.size(), DataLog::Stream::kCleaner, coding);
      if (!ticket.ok()) {
        if (!ticket.status().IsNoSpace()) return ticket.status();
        out_of_room = true;
        break;  // the cleaner's reserve is used up; commit what moved so far
      }
      stored_moved += buf.size();
      if (whole_run) {
        run_copy = std::move(*ticket);
        run_copied_from = m.phys;
      } else {
        piece_copy = std::move(*ticket);
      }
    }
    const DataLog::Ticket& copy = whole_run ? *run_copy : *piece_copy;
    {
      std::unique_lock<std::shared_mutex> lock(ns_mu_);
      if (still_mapped(m)) {
        // A raw piece was copied alone, so it starts the copy; a compressed
        // one keeps its place in the decoded run.
        CKPTFS_RETURN_IF_ERROR(Mutate(record::WriteExtent{m.ino, m.offset,
                                                          static_cast<uint32_t>(m.length),
                                                          copy.extent(), whole_run ? m.skip : 0,
                                                          0}));
        moved += m.length;
      }
    }
  }
  run_copy.reset();
  cleaned_bytes_.fetch_add(stored_moved);
  cleaned_segments_.fetch_add(victims.size());
  // The victims hold no live bytes now; the commit makes them free.
  CKPTFS_RETURN_IF_ERROR(CommitNow());
  spdlog::debug("cleaner: {} segment(s) emptied, {} live bytes moved", victims.size(), moved);
  // Victims left part live (no room to move the rest) are not emptied: say
  // so, or a caller looking for space would clean again for nothing.
  return CleanResult{out_of_room && moved == 0 ? 0 : victims.size(), stored_moved};
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
