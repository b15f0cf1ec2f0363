// Cleaner implementation.
#include "clean/cleaner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <thread>

#include "clean/cleaning_policy.h"

namespace ckptfs {

struct Cleaner::Move : MappedRun {
  CompressionPolicy recompress;  // enabled: compress this raw piece on the way
};

Cleaner::Cleaner(const MountOptions& options, const Superblock& sb, Journal* journal,
                 DataLog* data, SegmentTable* segments, CompressionPolicies* policies,
                 EncoderTally* tally, const std::atomic<uint64_t>* user_bytes_written,
                 Evictor* evictor)
    : options_(options),
      sb_(sb),
      journal_(journal),
      data_(data),
      segments_(segments),
      policies_(policies),
      tally_(tally),
      user_bytes_written_(user_bytes_written),
      evictor_(evictor) {}

Cleaner::~Cleaner() { Stop(); }

void Cleaner::Start() {
  // Raw data a previous mount left is compressed too, once idle.
  IdleWatch idle{user_bytes_written_->load(), 0, !options_.compress_when_idle};
  thread_.Start(std::chrono::milliseconds(100), [this, idle]() mutable { Tick(&idle); });
}

CleanerStats Cleaner::stats() const {
  return CleanerStats{bytes_moved_.load(), segments_cleaned_.load()};
}

Result<DataLog::Ticket> Cleaner::AppendMakingRoom(const char* data, size_t len, RunCoding coding,
                                                  bool placing_promised) {
  constexpr auto kUser = DataLog::Stream::kUser;
  auto ticket = data_->Append(data, len, kUser, coding, placing_promised);
  if (ticket.ok() || !ticket.status().IsNoSpace()) return ticket;
  // Segments freed by deletions become reusable once their records commit.
  CKPTFS_RETURN_IF_ERROR(journal_->CommitNow());
  ticket = data_->Append(data, len, kUser, coding, placing_promised);
  // Then dead space inside partly live segments: clean until the write fits
  // or nothing is left to clean (the store is truly full).
  // With a tier, segments it holds go first: giving them up copies nothing.
  size_t evicted_total = 0, cleaned_total = 0;
  int reuse_waits = 0;
  for (int round = 0; round < 64 && !ticket.ok() && ticket.status().IsNoSpace(); ++round) {
    // What was given up or cleaned is free once the reads that may still
    // use it end (a read from RADOS can take a while): wait a little for
    // that before giving up more of the cache.
    if (evicted_total + cleaned_total > 0 && reuse_waits < 100 && segments_->Usage().pending_free > 0) {
      ++reuse_waits;
      --round;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ticket = data_->Append(data, len, kUser, coding, placing_promised);
      continue;
    }
    CKPTFS_ASSIGN_OR_RETURN(Freed freed, MakeRoomOnce());
    evicted_total += freed.evicted;
    cleaned_total += freed.cleaned;
    // Tried even when this pass found nothing: the background pass it
    // waited for may have just made the room.
    ticket = data_->Append(data, len, kUser, coding, placing_promised);
    // Nothing left to evict or worth cleaning: the live data fills the store.
    if (freed.evicted == 0 && freed.cleaned == 0) break;
  }
  // A store that is its tier's cache is full only of what the tier does
  // not hold yet: a user write waits for the drain (as for a slow device)
  // rather than failing, while the drain keeps publishing. A promised
  // write never waits here (for a compressor, the writers it serves may).
  const auto deadline = std::chrono::steady_clock::now() + kWaitForTier;
  while (!ticket.ok() && ticket.status().IsNoSpace() && !placing_promised && evictor_ != nullptr &&
         std::chrono::steady_clock::now() < deadline) {
    // What this burst wrote reaches an image only once it is committed.
    CKPTFS_RETURN_IF_ERROR(journal_->CommitNow());
    if (!evictor_->active()) break;
    // Taken before looking: an image published while this pass looks is
    // one the wait below must not wait for.
    const uint64_t image = evictor_->TierImage();
    CKPTFS_ASSIGN_OR_RETURN(size_t evicted, EvictOnce(8));
    evicted_total += evicted;
    // Either way, the background pass may have made room meanwhile.
    ticket = data_->Append(data, len, kUser, coding, placing_promised);
    // Then wait, even after evicting: what was given up frees once the
    // reads still using it end, and evicting more meanwhile would empty
    // the cache of what restores are reading.
    if (!ticket.ok() && ticket.status().IsNoSpace()) {
      (void)evictor_->WaitForTier(image, std::chrono::seconds(5));
    }
  }
  if (!ticket.ok() && ticket.status().IsNoSpace()) {
    const SegmentUsage u = segments_->Usage();
    spdlog::warn("store full: a {}-byte write fails: {} ({} of {} segments free, {} waiting for a "
                 "commit or a read, {} reserved; {} evicted and {} cleaned making room)",
                 len, ticket.status().ToString(), u.free, u.total, u.pending_free, u.reserved,
                 evicted_total, cleaned_total);
  }
  return ticket;
}

Result<Cleaner::Freed> Cleaner::MakeRoomOnce() {
  Freed freed;
  CKPTFS_ASSIGN_OR_RETURN(freed.evicted, EvictOnce(8));
  if (freed.evicted == 0) {
    CKPTFS_ASSIGN_OR_RETURN(CleanResult result, CleanOnce(8));
    freed.cleaned = result.segments;
  }
  return freed;
}

Result<size_t> Cleaner::EvictOnce(size_t max_victims) {
  if (evictor_ == nullptr || !evictor_->active()) return 0;
  MutexLock pass(&pass_mu_);
  return evictor_->EvictOnce(max_victims);
}

uint64_t Cleaner::Room() const {
  const SegmentUsage usage = segments_->Usage();
  const uint64_t free_bytes =
      (usage.free - std::min(usage.free, usage.meta_reserved)) * sb_.segment_size;
  const uint64_t promised = usage.pending_reserved_bytes + usage.fallocated_bytes;
  return free_bytes - std::min(free_bytes, promised) +
         data_->open_buffer_room(DataLog::Stream::kCleaner);
}

Result<CleanResult> Cleaner::CleanOnce(size_t max_victims) {
  MutexLock pass(&pass_mu_);
  // The moved data must fit in what the cleaner may allocate.
  const std::vector<uint32_t> victims =
      PickVictims(segments_->CleaningCandidates(), sb_.segment_size, max_victims, Room());
  if (victims.empty()) return CleanResult{};
  // With compress_when=idle what the cleaner moves is compressed too, so
  // that what it writes (never picked by RecompressOnce) is done with.
  return Evacuate(victims, /*recompress=*/options_.compress_when_idle);
}

Result<CleanResult> Cleaner::RecompressOnce(size_t max_victims) {
  MutexLock pass(&pass_mu_);
  // The burst's last segment is still open and, idle, will not fill: seal
  // it if it holds enough to be worth the room given up.
  if (data_->open_buffer_room(DataLog::Stream::kUser) <= sb_.segment_size * 3 / 4) {
    data_->SealOpen(DataLog::Stream::kUser);
  }
  const uint64_t written_before = user_bytes_written_->load();
  // File bytes per segment that are stored raw but belong to files that
  // compress: what rewriting the segment would shrink.
  std::vector<uint64_t> raw_bytes(sb_.segment_count, 0);
  {
    ReaderLock lock(journal_->mu());
    for (const auto& [ino, node] : journal_->ns().inodes()) {
      if (!node->is_regular() || !policies_->For(*node).enabled) continue;
      for (const auto& [offset, e] : node->extents.entries()) {
        if (e.phys.local() && !e.phys.compressed()) {
          raw_bytes[segments_->SegmentOf(e.phys.addr)] += e.length;
        }
      }
    }
  }
  // Only segments users wrote: what the cleaner wrote was recompressed
  // already, or is what did not compress, and is not tried again.
  std::vector<SegmentSummary> candidates;
  for (const SegmentSummary& c : segments_->CleaningCandidates()) {
    if (!c.by_cleaner && raw_bytes[c.segment] > 0 && 2 * raw_bytes[c.segment] >= c.live_bytes) {
      candidates.push_back(c);
    }
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const SegmentSummary& a, const SegmentSummary& b) { return a.age > b.age; });
  std::vector<uint32_t> victims;
  uint64_t room = Room();
  for (const SegmentSummary& c : candidates) {
    if (victims.size() >= max_victims || c.live_bytes > room) break;
    room -= c.live_bytes;
    victims.push_back(c.segment);
  }
  // Writes resumed while scanning: leave the device to them.
  if (victims.empty() || user_bytes_written_->load() != written_before) return CleanResult{};
  return Evacuate(victims, /*recompress=*/true);
}

Result<CleanResult> Cleaner::Evacuate(const std::vector<uint32_t>& victims, bool recompress) {
  std::vector<bool> is_victim(sb_.segment_count, false);
  for (uint32_t v : victims) is_victim[v] = true;

  std::vector<Move> moves;
  {
    ReaderLock lock(journal_->mu());
    for (const auto& [ino, node] : journal_->ns().inodes()) {
      CompressionPolicy policy;
      if (recompress && node->is_regular()) policy = policies_->For(*node);
      for (const auto& [offset, e] : node->extents.entries()) {
        if (e.phys.local() && is_victim[segments_->SegmentOf(e.phys.addr)]) {
          moves.push_back({{ino, offset, e.length, e.phys, e.skip}, policy});
        }
      }
    }
  }
  // Device order, so the victims are read sequentially.
  std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
    return a.phys.addr != b.phys.addr ? a.phys.addr < b.phys.addr : a.skip < b.skip;
  });

  // Which stored bytes each move copies. A compressed run that is mostly
  // live moves whole and still encoded: one copy serves every move out of
  // it. Otherwise the copy is the span of the run that this move's
  // reference and those overlapping it cover: references sharing bytes
  // (copy_file_range) share the copy too, so cleaning keeps a copy free,
  // while the dead bytes between unshared pieces are left behind. Moves
  // are in device order, so a span's moves are adjacent.
  struct Span {
    PhysicalExtent run;
    bool whole_run;
    uint32_t from, end;  // decoded bytes of the run (whole_run: all of it)
  };
  std::vector<Span> spans;
  std::vector<size_t> span_of(moves.size());  // by move
  for (size_t i = 0; i < moves.size(); ++i) {
    const Move& m = moves[i];
    const bool whole_run =
        m.phys.compressed() && 2 * segments_->CompressedRunRefs(m.phys) >= m.phys.raw_length;
    const uint32_t end = static_cast<uint32_t>(m.skip + m.length);
    if (!spans.empty() && spans.back().run == m.phys && m.skip < spans.back().end) {
      spans.back().end = std::max(spans.back().end, end);  // within the span so far
    } else {
      spans.push_back(whole_run ? Span{m.phys, true, 0, m.phys.logical_length()}
                                : Span{m.phys, false, m.skip, end});
    }
    span_of[i] = spans.size() - 1;
  }

  std::unique_ptr<ExtentEncoder> encoder;
  std::vector<char> encoded;
  uint64_t moved = 0;         // file bytes re-pointed
  uint64_t stored_moved = 0;  // bytes copied (a whole run may hold dead ones)
  bool out_of_room = false;
  bool unmoved = false;  // a live piece could not be read
  std::string buf;
  // The copy the current span's moves are re-pointed at; its ticket goes as
  // soon as they are done (a held ticket keeps a buffer unflushed).
  std::optional<DataLog::Ticket> copy;
  size_t copied_span = 0;
  for (size_t i = 0; i < moves.size(); ++i) {
    const Move& m = moves[i];
    const Span& span = spans[span_of[i]];
    if (copy && copied_span != span_of[i]) copy.reset();
    if (!copy) {
      Status s;
      {
        // As a user read does: the range is checked and its segment pinned
        // (read pin) under the namespace lock, so it cannot be freed and
        // reused between the check and the read.
        ReaderLock lock(journal_->mu());
        if (!journal_->ns().StillMaps(m)) continue;
        ReadPins::Pin pin = segments_->PinForRead();
        lock.Unlock();
        if (span.whole_run) {
          s = data_->ReadStored(m.phys, &buf);
        } else {
          buf.resize(span.end - span.from);
          s = data_->Read(m.phys, span.from, buf.data(), buf.size());
        }
      }
      if (!s.ok()) {
        // Damaged data stays where it is, still reported by reads and fsck;
        // its victim is not emptied.
        unmoved = true;
        spdlog::warn("cleaner: cannot move inode {} bytes {}+{}: {}", m.ino, m.offset, m.length,
                     s.ToString());
        continue;
      }
      RunCoding coding =
          span.whole_run ? RunCoding{m.phys.codec, m.phys.raw_length} : RunCoding{};
      const char* bytes = buf.data();
      size_t size = buf.size();
      // A raw span, or the decoded live part of a mostly dead run.
      if (!span.whole_run && m.recompress.enabled) {
        if (!encoder) encoder = std::make_unique<ExtentEncoder>();
        const Codec codec = encoder->Encode(m.recompress, buf.data(), buf.size(), &encoded);
        if (codec != Codec::kRaw) {
          coding = RunCoding{static_cast<uint8_t>(codec), static_cast<uint32_t>(buf.size())};
          bytes = encoded.data();
          size = encoded.size();
        }
      }
      auto ticket = data_->Append(bytes, size, DataLog::Stream::kCleaner, coding);
      if (!ticket.ok()) {
        if (!ticket.status().IsNoSpace()) return ticket.status();
        out_of_room = true;
        break;  // the cleaner's reserve is used up; commit what moved so far
      }
      stored_moved += size;
      copy = std::move(*ticket);
      copied_span = span_of[i];
    }
    {
      WriterLock lock(journal_->mu());
      if (journal_->ns().StillMaps(m)) {
        // The move keeps its place within what was copied.
        CKPTFS_RETURN_IF_ERROR(journal_->Apply(record::WriteExtent{
            m.ino, m.offset, static_cast<uint32_t>(m.length), copy->extent(),
            m.skip - span.from, 0}));
        moved += m.length;
      }
    }
  }
  copy.reset();
  bytes_moved_.fetch_add(stored_moved);
  if (encoder) tally_->AddSince(encoder->stats(), EncoderStats{});
  segments_cleaned_.fetch_add(victims.size());
  // The victims hold no live bytes now; the commit makes them free.
  CKPTFS_RETURN_IF_ERROR(journal_->CommitNow());
  spdlog::debug("cleaner: {} segment(s) emptied, {} live bytes moved", victims.size(), moved);
  // Victims left part live (no room, or damaged data) are not all emptied:
  // say so, or a caller looking for space would clean again for nothing.
  return CleanResult{(out_of_room && moved == 0) || unmoved ? 0 : victims.size(), stored_moved};
}

void Cleaner::Tick(IdleWatch* idle) {
  const uint64_t written = user_bytes_written_->load();
  if (written != idle->last_written) {
    idle->last_written = written;
    idle->idle_ticks = 0;
    idle->recompressed_all = false;
  } else {
    ++idle->idle_ticks;
  }
  const bool idle_pass_due =
      options_.compress_when_idle && idle->idle_ticks >= 10 && !idle->recompressed_all;
  const bool clean = segments_->SpaceIsLow();
  const bool recompress = !clean && idle_pass_due;
  if (!clean && !recompress) return;
  const auto start = std::chrono::steady_clock::now();
  if (clean) {
    // A store that is its tier's cache makes room by giving up what the
    // tier holds, oldest first, before copying anything.
    auto evicted = EvictOnce(4);
    if (!evicted.ok()) spdlog::error("evictor: {}", evicted.status().ToString());
    if (evicted.ok() && *evicted > 0) return;
  }
  auto cleaned = clean ? CleanOnce(4) : RecompressOnce(4);
  // A store made full by a raw burst has nothing dead to clean: compressing
  // is what frees space then.
  if (clean && cleaned.ok() && cleaned->segments == 0 && idle_pass_due) {
    cleaned = RecompressOnce(4);
    if (cleaned.ok() && cleaned->segments == 0) idle->recompressed_all = true;
  }
  if (!cleaned.ok()) {
    spdlog::error("cleaner: {}", cleaned.status().ToString());
    return;
  }
  if (recompress && cleaned->segments == 0) idle->recompressed_all = true;
  if (options_.clean_rate_bytes > 0 && cleaned->moved > 0) {
    // Rate limit: sleep off what moving these bytes "cost" at the set rate.
    const auto budget = std::chrono::duration<double>(
        static_cast<double>(cleaned->moved) / static_cast<double>(options_.clean_rate_bytes));
    std::this_thread::sleep_until(start +
                                  std::chrono::duration_cast<std::chrono::nanoseconds>(budget));
  }
}

}  // namespace ckptfs
