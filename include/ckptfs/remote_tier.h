// RemoteTier: what a store needs of the tier it drains to (tier/drainer.h)
// to use its local device as a cache: which segments the tier already holds,
// so their local copies may be evicted, and the bytes of evicted runs.
//
// A segment incarnation (include/ckptfs/committed_image.h) that the tier's
// last published image holds, in ranges that cover a run, can have that run
// re-pointed at the tier: the run's address becomes a remote one
// (PhysicalExtent::RemoteAddress(object, offset within the segment)), the
// local segment dies and is reused, and reads of the run go to the tier. The
// tier keeps every object that the store's committed state points at
// (CommittedImage::remote_objects) in each image it publishes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "ckptfs/committed_image.h"
#include "ckptfs/status.h"

namespace ckptfs {

// Where a published segment incarnation lives in the tier.
struct RemoteSegment {
  uint64_t object = 0;             // the tier's object holding it
  std::vector<ByteRange> ranges;   // bytes of the segment it holds, sorted, disjoint
};

class RemoteTier {
 public:
  virtual ~RemoteTier() = default;
  // The segment's incarnation as the last published image holds it, or
  // nothing when that image does not hold this incarnation. Cheap (memory).
  virtual std::optional<RemoteSegment> Published(uint32_t segment, uint64_t incarnation) = 0;
  // Reads `len` bytes at `offset` of `object`. Thread-safe; bounded in time
  // (an unreachable tier fails the read rather than hanging it).
  virtual Status ReadRemote(uint64_t object, uint64_t offset, void* buf, size_t len) = 0;
  // Counts the images the tier has published: the one Published() answers
  // from now is the ImageSeq()th.
  virtual uint64_t ImageSeq() = 0;
  // Waits until the tier has published an image past the `seen`th, or
  // `timeout` passes; whether it has. A store that is full waits here for
  // what it wrote to become evictable, with the ImageSeq() it took before
  // it last looked for something to evict: an image published since then
  // ends the wait at once instead of being missed.
  virtual bool WaitForNewerImage(uint64_t seen, std::chrono::milliseconds timeout) = 0;
};

}  // namespace ckptfs
