// RemoveImage: deletes a RADOS image, every object of it, for an operator
// done with it (`ckptfs-tier remove`): a job's images pile up in the pool
// otherwise, and a new store may not drain into a name another store's
// image still holds.
//
// What it refuses, removing nothing:
// - an image a writer holds (its lock): that mount would go on publishing
//   into it. Unmount it first, or take a dead writer's image over
//   (`ckptfs-tier takeover`) and then remove it;
// - a namespace holding objects ckptfs does not make (anything but the
//   manifest, the lock object and segment objects `seg.S.N`): the name is
//   likely a typo for another application's;
// - unless forced, an image whose manifest lists runs its store evicted, or
//   whose manifest does not decode: the store, if it still exists, reads
//   those runs from the image alone.
//
// It holds the writer lock itself from the check for evicted runs on, so
// a writer that mounts meanwhile is refused as a second writer, and one
// that unmounted just before has published its last manifest. The manifest goes first:
// a mount of the image from then on finds it never drained instead of a
// manifest naming objects that are gone. Mounts of the image elsewhere lose
// it: their reads of what they had not read fail. Objects that appear
// while it removes (an old writer that was stalled, not fenced) are
// removed by a second look.
#pragma once

#include <cstdint>

#include "ckptfs/status.h"
#include "rados_image.h"

namespace ckptfs {

struct RemovedImage {
  uint64_t objects = 0;   // removed, the lock object included
  uint64_t segments = 0;  // segment objects among them
};

// Busy when a writer holds the image, Invalid for foreign objects or (not
// `force`) evicted runs or a damaged manifest, NotFound when the image
// holds no object at all; other errors as RADOS gave them. A failure part
// way leaves the rest for the next call.
Result<RemovedImage> RemoveImage(RadosImage* image, bool force);

}  // namespace ckptfs
