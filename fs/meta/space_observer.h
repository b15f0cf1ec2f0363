// SpaceObserver: told whenever stored bytes gain or lose a reference, so the
// segment table always knows how much of each segment is live.
#pragma once

#include <cstdint>

#include "format/physical_extent.h"

namespace ckptfs {

class SpaceObserver {
 public:
  virtual ~SpaceObserver() = default;
  virtual void Referenced(const PhysicalExtent& phys, uint64_t bytes) = 0;
  virtual void Released(const PhysicalExtent& phys, uint64_t bytes) = 0;
};

}  // namespace ckptfs
