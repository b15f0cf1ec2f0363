// SpaceObserver: told whenever stored bytes gain or lose a reference, so the
// segment table always knows how much of each segment is live. A reference
// is `bytes` file bytes from `skip` bytes into the run `phys` (decoded
// bytes for a compressed run); references may overlap (copy_file_range
// shares runs between files).
#pragma once

#include <cstdint>

#include "format/physical_extent.h"

namespace ckptfs {

class SpaceObserver {
 public:
  virtual ~SpaceObserver() = default;
  virtual void Referenced(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes) = 0;
  virtual void Released(const PhysicalExtent& phys, uint32_t skip, uint64_t bytes) = 0;
};

}  // namespace ckptfs
