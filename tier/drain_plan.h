// DrainPlan: what the image holds and will hold of the store, as the
// drain's cycle plans it: for each local segment, the object that holds
// its current incarnation, the chunks of it sent so far and whether the
// object is this writer's yet; the ids objects get; the manifest last
// published; and what goes to the garbage as segments are reused.
//
// An image is always exactly some commit: a manifest names only bytes
// already written, and the objects it names are never rewritten in the
// ranges it lists, since each segment incarnation has its own object.
//
// Used by the drain's cycle only (Drainer::cycle_mu_).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ckptfs/committed_image.h"
#include "ckptfs/status.h"
#include "garbage_collector.h"
#include "image_manifest.h"
#include "image_writer.h"
#include "rados_image.h"

namespace ckptfs {

class DrainPlan {
 public:
  // Whose a segment's object is, for the next write to it (RadosImage::WriteAs).
  enum class Ownership {
    kToCreate,    // not made yet: the next write makes it, or finds the id taken
    kToTakeOver,  // a previous writer's, named by the manifest read at open
    kOwned,       // made or taken over by this writer
  };
  // A part of a segment to send: at most one write.
  struct Piece {
    uint32_t segment;
    uint64_t offset;
    uint64_t length;
  };

  DrainPlan(ImageWriter* writer, CommittedImageSource* source, std::chrono::seconds gc_delay)
      : writer_(writer), source_(source), garbage_(gc_delay) {}

  // Goes on from the manifest an earlier writer published.
  void Resume(ImageManifest published);
  const ImageManifest& published() const { return published_; }
  // Whether the image holds commit `lsn` of the store and the image's
  // earlier contents were checked (Adopt).
  bool Holds(uint64_t lsn) const {
    return published_.publish_seq != 0 && published_.commit_lsn >= lsn && adopted_;
  }
  bool adopted() const { return adopted_; }

  // Makes the previous writer's chunks of segments this store still holds
  // unchanged (checked by CRC) count as sent; the bytes adopted.
  Result<uint64_t> Adopt(const CommittedImage& image);
  // The pieces `image` needs that the image lacks, cut at `chunk_bytes`
  // and taken from each segment in turn; their bytes in `behind_bytes`.
  // Segments reused or gone since get new objects, their old ones going to
  // the garbage.
  std::vector<Piece> PiecesToSend(const CommittedImage& image, uint64_t chunk_bytes, uint64_t* behind_bytes);
  // Lists the image once, when the drain first catches up: objects a dead
  // writer left unnamed go to the garbage, and ids continue past them. Not
  // before the first send: a listing visits every placement group of the
  // pool (0.6 s on the test cluster), and the ids need no listing to be
  // safe (see SettleContested).
  Status Scan();

  // The object a piece of `segment` goes to, and its incarnation.
  uint64_t ObjectOf(uint32_t segment) const { return known_.at(segment).object_id; }
  uint64_t IncarnationOf(uint32_t segment) const { return known_.at(segment).incarnation; }
  // How the next write to `segment`'s object goes; for an object to take
  // over, looks its owner up first, into `from`.
  Result<RadosImage::WriteAs> WriteAs(uint32_t segment, std::string* from);
  // A write to `segment`'s object is sent: the writes after it go as the
  // owner's (RADOS applies one client's operations on an object in the
  // order they were sent). The ownership before it.
  Ownership Sending(uint32_t segment);
  // A write sent when the object's ownership was `before` failed: a first
  // write may not have made or taken the object over, so the next one tries
  // again as the first.
  void WriteFailed(uint32_t segment, Ownership before);
  // A chunk arrived: the image's from now on.
  void ChunkArrived(uint32_t segment, const ImageChunk& chunk);
  // After writes to the objects of `segments` were refused for their
  // owner: an id taken by an object a dead writer left gets the segment a
  // new object; one taken over by a successor fences this writer.
  Status SettleContested(const std::set<uint32_t>& segments);

  // The manifest that publishes `image`, as sent so far.
  Result<ImageManifest> NextManifest(const CommittedImage& image) const;
  // `next` was published: what it no longer names goes to the garbage.
  void Published(ImageManifest next);
  // Removes the garbage that is due; how many objects it removed.
  Result<uint64_t> CollectGarbage() { return garbage_.Collect(writer_); }

 private:
  // What the image holds of one local segment incarnation.
  struct Known {
    uint64_t incarnation = 0;
    uint64_t object_id = 0;
    std::vector<ImageChunk> chunks;  // sorted, disjoint
    Ownership ownership = Ownership::kToCreate;
  };
  // Sends the object of `k`, a segment's entry being dropped, to the
  // garbage with the next manifest, unless the published one names it.
  void DropUnpublished(uint32_t segment, const Known& k);

  ImageWriter* const writer_;
  CommittedImageSource* const source_;
  GarbageCollector garbage_;
  std::map<uint32_t, Known> known_;
  uint64_t next_object_id_ = 1;
  ImageManifest published_;  // publish_seq 0: none yet
  bool scanned_ = false;
  bool adopted_ = false;
};

}  // namespace ckptfs
