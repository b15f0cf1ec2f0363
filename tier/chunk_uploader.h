// ChunkUploader: sends the pieces of a commit the image lacks (DrainPlan)
// from the local store into their objects: reads the next pieces ahead on
// `reads_ahead` threads while up to `max_in_flight` writes are out, each
// write showing that its object is this writer's (RadosImage::WriteAs).
//
// A write's buffer is filled again only once librados has let go of it: a
// write that timed out may still be queued to go (RadosImage::SendBuffer).
// Used by the drain's cycle only (Drainer::cycle_mu_).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "ckptfs/committed_image.h"
#include "drain_plan.h"
#include "drain_progress.h"
#include "image_writer.h"
#include "rados_image.h"
#include "util/worker_pool.h"

namespace ckptfs {

class ChunkUploader {
 public:
  // No write starts once the steady_clock passes `*deadline` (a count of
  // its ticks), which another thread may move at any time: a drain far
  // behind does not hold an unmount for all it has to send.
  ChunkUploader(CommittedImageSource* source, DrainPlan* plan, ImageWriter* writer, DrainProgress* progress,
                const std::atomic<int64_t>* deadline, unsigned max_in_flight, unsigned reads_ahead);

  // Sends `pieces` of the segments' current incarnations. Sets `redo`
  // when the commit cannot be completed now, but a later cycle may: a
  // segment was handed out again while it was read, or an object id was
  // found taken.
  Status Send(const std::vector<DrainPlan::Piece>& pieces, uint64_t segment_bytes, bool* redo);

 private:
  // A piece on its way from the local store: read and checksummed by
  // readers_, so that the reads of the next pieces overlap each other and
  // the writes in flight. Read serially by the drain thread, they took 4 of
  // the 7 s a 1.7 GB drain lasted (docs/tuning.md#drain-reads-ahead).
  struct Loaded {
    Result<bool> unchanged = false;  // false: the segment was handed out again
    std::optional<RadosImage::Payload> payload;  // when unchanged
    uint32_t crc = 0;
  };
  struct Reading {
    DrainPlan::Piece piece;
    uint64_t object_id;
    size_t buffer;
    std::future<Loaded> loaded;
  };
  struct InFlight {
    std::unique_ptr<RadosImage::Op> op;
    DrainPlan::Piece piece;
    uint32_t crc;
    size_t buffer;
    DrainPlan::Ownership before;  // the object's, before this write was sent
  };
  // One Send's state.
  struct Transfer {
    explicit Transfer(const std::vector<DrainPlan::Piece>& to_send) : pieces(to_send) {}
    const std::vector<DrainPlan::Piece>& pieces;
    size_t next = 0;            // the next piece to read
    size_t buffer_bytes = 0;    // the largest piece's
    std::vector<size_t> free_buffers;
    RadosImage::CompletionSignal written;
    std::deque<Reading> reading;
    std::deque<InFlight> in_flight;
    std::set<uint32_t> contested;  // segments whose object refused a write for its owner
    Status failed;
  };

  // Starts reads of the next pieces into free buffers librados no longer
  // holds, up to reads_ahead.
  void StartReads(Transfer* t);
  // Waits for the first write to finish, whichever it is; a chunk that
  // arrived is the image's from now on.
  void CompleteOne(Transfer* t);
  // Sends the oldest piece read, `loaded`; false when the transfer ends
  // here.
  bool SendNext(Transfer* t, const RadosImage::WriteOnceHint& hint, Loaded loaded);

  CommittedImageSource* const source_;
  DrainPlan* const plan_;
  ImageWriter* const writer_;
  DrainProgress* const progress_;
  const std::atomic<int64_t>* const deadline_;
  const unsigned max_in_flight_;
  const size_t reads_ahead_;
  // What pieces are read into and sent from; between Sends, only those
  // librados still holds. A deque, so that adding a buffer moves none that
  // a read is filling.
  std::deque<RadosImage::SendBuffer> buffers_;
  WorkerPool readers_;  // last: joined before the buffers go
};

}  // namespace ckptfs
