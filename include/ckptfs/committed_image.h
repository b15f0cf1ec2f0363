// CommittedImage: what a copy of the store made at one commit must hold, for
// a tier that drains the store elsewhere (tier/drainer.h).
//
// A store's state at a commit is its superblock plus the bytes of the
// segments the log points at: the metadata log's chain and every data
// segment still in use. Segments are append-only while in use, so the copy
// needs, per segment, only the ranges written so far in its current
// incarnation (one use between two hand-outs; see
// fs/io/write_tracking_device.h); a segment handed out again is a new
// incarnation, which the copy must keep apart from the old one, since an
// older copy may still point at the old bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ckptfs/status.h"

namespace ckptfs {

class RemoteTier;

struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool operator==(const ByteRange&) const = default;
};

struct SegmentImage {
  uint32_t segment = 0;
  uint64_t incarnation = 0;
  // Bytes of the segment that hold what the commit needs (and perhaps data
  // written after it, which nothing in the commit points at). Sorted,
  // disjoint, offsets within the segment.
  std::vector<ByteRange> ranges;
};

struct CommittedImage {
  // The superblock block (4 KiB) as the store holds it at the commit.
  std::string superblock;
  uint64_t store_id = 0;
  uint64_t data_start = 0;
  uint64_t segment_size = 0;
  uint32_t segment_count = 0;
  // The lsn of the last metadata log block committed (Journal::
  // committed_lsn): persistent and growing, so images of larger commit_lsn
  // are newer, across remounts too.
  uint64_t commit_lsn = 0;
  std::vector<SegmentImage> segments;  // by segment number
  // Tier objects (RemoteTier) holding runs evicted from the local device
  // that the commit may point at: the image must keep them. Sorted.
  std::vector<uint64_t> remote_objects;
};

// Implemented by a filesystem opened with MountOptions::track_committed_images.
class CommittedImageSource {
 public:
  virtual ~CommittedImageSource() = default;
  // The state as of the last commit. Cheap enough to call once per drain
  // cycle (it walks the segment table), not once per write.
  virtual Result<CommittedImage> CaptureCommitted() = 0;
  // commit_lsn of the last commit, without capturing anything.
  virtual uint64_t CommittedLsn() const = 0;
  // File bytes written since the store was opened: how busy it is, for a
  // drain that stays out of a burst's way.
  virtual uint64_t BytesWritten() const = 0;
  // Whether the store is short of free space: a drain that holds back for
  // a burst must not then, since only what it drained can be evicted.
  virtual bool SpaceIsLow() const = 0;
  // Reads bytes of a segment's incarnation (offset, length and buffer 4 KiB
  // aligned). False when the segment was handed out again, so those bytes
  // are gone: an image that needs them cannot be completed.
  virtual Result<bool> ReadSegment(uint32_t segment, uint64_t incarnation, uint64_t offset,
                                   void* buf, size_t len) = 0;
  // The tier the store may evict published segments to when its device runs
  // short, and reads evicted runs from; null detaches it (reads of evicted
  // runs then fail, saying why). The tier must stay valid until detached;
  // detaching waits for reads using it to end.
  virtual void AttachTier(RemoteTier* tier) = 0;
};

}  // namespace ckptfs
