// GarbageCollector: the objects of an image that no manifest of this
// writer's names any more, removed once `gc_delay` has passed, so that a
// read-only mount of an older manifest elsewhere keeps working meanwhile.
// Used by the drain's cycle only (Drainer::cycle_mu_).
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ckptfs/status.h"
#include "image_writer.h"

namespace ckptfs {

class GarbageCollector {
 public:
  explicit GarbageCollector(std::chrono::seconds gc_delay) : gc_delay_(gc_delay) {}

  // `name` goes once the delay has passed.
  void Add(std::string name);
  // `name`, sent to and never named by a manifest this writer published,
  // goes with the next manifest published: not sooner, since a manifest
  // whose write timed out may still have reached RADOS and name it.
  void AddUnpublished(std::string name);
  // A manifest naming `named` replaced one naming `named_before`: what
  // only the older one named, and the unpublished objects the new one does
  // not name, go once the delay has passed.
  void Published(const std::set<std::string>& named_before, const std::set<std::string>& named);

  // Removes the objects that are due, if the image is still `writer`'s;
  // how many it removed. Objects whose lookup or removal failed stay for
  // the next call.
  Result<uint64_t> Collect(ImageWriter* writer);

 private:
  const std::chrono::seconds gc_delay_;
  // Objects to remove once their time comes.
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>> due_;
  std::vector<std::string> unpublished_;
};

}  // namespace ckptfs
