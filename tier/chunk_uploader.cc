// ChunkUploader: see chunk_uploader.h.
#include "chunk_uploader.h"

#include <algorithm>
#include <string>

namespace ckptfs {

ChunkUploader::ChunkUploader(CommittedImageSource* source, DrainPlan* plan, ImageWriter* writer,
                             DrainProgress* progress, const std::atomic<int64_t>* deadline,
                             unsigned max_in_flight, unsigned reads_ahead)
    : source_(source), plan_(plan), writer_(writer), progress_(progress), deadline_(deadline),
      max_in_flight_(max_in_flight),
      reads_ahead_(std::max(1u, reads_ahead)), readers_(reads_ahead) {}

Status ChunkUploader::Send(const std::vector<DrainPlan::Piece>& pieces, uint64_t segment_bytes, bool* redo) {
  // 64 KiB checksum blocks: BlueStore's default blob size caps them there
  // anyway; asking for no more keeps a restore, which reads runs (4 KiB-
  // aligned, up to 1 MiB) anywhere in an object, from reading more than a
  // block extra on a cluster with larger blobs
  // (docs/tuning.md#allocation-hint).
  const RadosImage::WriteOnceHint hint{segment_bytes, 64 << 10};
  Transfer t(pieces);
  // Pieces are cut within a segment: a write size above the segment's needs
  // no buffer larger than the largest piece.
  for (const DrainPlan::Piece& p : pieces) t.buffer_bytes = std::max<size_t>(t.buffer_bytes, p.length);
  // A cycle with larger pieces (another drain_write) starts a new set.
  if (!buffers_.empty() && buffers_.front().size() < t.buffer_bytes) buffers_.clear();
  for (size_t b = 0; b < buffers_.size(); ++b) t.free_buffers.push_back(b);

  while (t.failed.ok() && !*redo) {
    StartReads(&t);
    if (t.reading.empty()) {
      if (t.next == pieces.size()) break;
      // No buffer to read into: a write's completion may free one.
      if (!t.in_flight.empty()) {
        CompleteOne(&t);
        continue;
      }
      t.failed = Status::Busy(writer_->name() + ": librados still holds " + std::to_string(buffers_.size()) +
                              " buffers of writes that timed out (an OSD that does not answer); the drain "
                              "goes on once it lets go of them");
      break;
    }
    if (std::chrono::steady_clock::now().time_since_epoch().count() > deadline_->load()) {
      t.failed = Status::Busy(writer_->name() + ": the time to drain ran out with " +
                              std::to_string(pieces.size() - t.next + t.reading.size()) + " pieces still to send");
      break;
    }
    Loaded loaded = t.reading.front().loaded.get();
    if (!loaded.unchanged.ok() || !*loaded.unchanged) {
      t.free_buffers.push_back(t.reading.front().buffer);
      t.reading.pop_front();
      if (!loaded.unchanged.ok()) t.failed = loaded.unchanged.status();
      else *redo = true;
      break;
    }
    if (!SendNext(&t, hint, std::move(loaded))) break;
  }
  // Abandoned reads: their bytes are not sent, and get() drops their
  // payloads' references, so that only librados' own keep a buffer below.
  for (Reading& r : t.reading) {
    if (r.loaded.valid()) (void)r.loaded.get();
  }
  while (!t.in_flight.empty()) CompleteOne(&t);
  // Only the buffers librados still holds stay, to be counted next cycle;
  // the rest would sit idle between drains (about 20 MiB a mount).
  std::erase_if(buffers_, [](const RadosImage::SendBuffer& b) { return !b.InUse(); });
  progress_->SetHeldSendBuffers(buffers_.size());
  if (t.contested.empty() || t.failed.code() != Status::Code::kExists) return t.failed;
  CKPTFS_RETURN_IF_ERROR(plan_->SettleContested(t.contested));
  *redo = true;  // with the objects settled, the next cycle sends again
  return Status::Ok();
}

void ChunkUploader::StartReads(Transfer* t) {
  // Those librados holds stay for the next cycle, up to a bound, so that
  // they are counted rather than replaced at every retry while an OSD does
  // not answer.
  const size_t max_buffers = 4 * (max_in_flight_ + reads_ahead_);
  while (t->next < t->pieces.size() && t->reading.size() < reads_ahead_) {
    auto reusable = std::find_if(t->free_buffers.begin(), t->free_buffers.end(),
                                 [&](size_t b) { return !buffers_[b].InUse(); });
    if (reusable == t->free_buffers.end()) {
      if (buffers_.size() >= max_buffers) return;  // librados holds them all
      buffers_.emplace_back(t->buffer_bytes);
      reusable = t->free_buffers.insert(t->free_buffers.end(), buffers_.size() - 1);
    }
    const DrainPlan::Piece p = t->pieces[t->next++];
    const size_t b = *reusable;
    t->free_buffers.erase(reusable);
    RadosImage::SendBuffer* buffer = &buffers_[b];
    auto load = [source = source_, p, incarnation = plan_->IncarnationOf(p.segment), buffer] {
      Loaded l;
      l.unchanged = source->ReadSegment(p.segment, incarnation, p.offset, buffer->data(), p.length);
      if (l.unchanged.ok() && *l.unchanged) {
        l.payload.emplace(buffer, p.length);
        l.crc = l.payload->Crc32c();
      }
      return l;
    };
    t->reading.push_back({p, plan_->ObjectOf(p.segment), b, readers_.Submit(std::move(load))});
  }
}

bool ChunkUploader::SendNext(Transfer* t, const RadosImage::WriteOnceHint& hint, Loaded loaded) {
  Reading r = std::move(t->reading.front());
  t->reading.pop_front();
  if (t->in_flight.size() >= max_in_flight_) {
    CompleteOne(t);
    if (!t->failed.ok()) {
      t->free_buffers.push_back(r.buffer);
      return false;
    }
  }
  // A writer that stalled here (hung, stopped, its host paused) may have
  // had its lock broken and its image taken over meanwhile: each write
  // shows it is the object's owner's (DrainPlan::WriteAs), so a successor's
  // objects refuse it.
  std::string from;
  auto as = plan_->WriteAs(r.piece.segment, &from);
  if (!as.ok()) {
    if (as.status().code() == Status::Code::kExists) t->contested.insert(r.piece.segment);
    t->failed = as.status();
    t->free_buffers.push_back(r.buffer);
    return false;
  }
  const DrainPlan::Ownership before = plan_->Sending(r.piece.segment);
  t->in_flight.push_back({writer_->image()->StartWrite(ImageManifest::ObjectName(r.piece.segment, r.object_id),
                                                       std::move(*loaded.payload), r.piece.offset, hint, *as,
                                                       &t->written),
                          r.piece, loaded.crc, r.buffer, before});
  return true;
}

void ChunkUploader::CompleteOne(Transfer* t) {
  auto done = t->in_flight.end();
  for (;;) {
    const uint64_t seen = t->written.completions();
    done = std::find_if(t->in_flight.begin(), t->in_flight.end(), [](const InFlight& f) { return f.op->Done(); });
    if (done != t->in_flight.end()) break;
    t->written.WaitBeyond(seen);
  }
  InFlight f = std::move(*done);
  t->in_flight.erase(done);
  auto written = f.op->Wait();
  t->free_buffers.push_back(f.buffer);
  if (!written.ok()) {
    plan_->WriteFailed(f.piece.segment, f.before);
    if (written.status().code() == Status::Code::kExists) t->contested.insert(f.piece.segment);
    if (t->failed.ok()) t->failed = written.status();
    return;
  }
  plan_->ChunkArrived(f.piece.segment,
                      ImageChunk{static_cast<uint32_t>(f.piece.offset), static_cast<uint32_t>(f.piece.length), f.crc});
  progress_->NoteUploaded(f.piece.length);
}

}  // namespace ckptfs
