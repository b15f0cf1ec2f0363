// GarbageCollector: see garbage_collector.h.
#include "garbage_collector.h"

#include <spdlog/spdlog.h>

#include <optional>

#include "image_manifest.h"

namespace ckptfs {

void GarbageCollector::Add(std::string name) {
  due_.push_back({std::chrono::steady_clock::now() + gc_delay_, std::move(name)});
}

void GarbageCollector::AddUnpublished(std::string name) { unpublished_.push_back(std::move(name)); }

void GarbageCollector::Published(const std::set<std::string>& named_before, const std::set<std::string>& named) {
  for (const std::string& name : named_before) {
    if (!named.count(name)) Add(name);
  }
  for (std::string& name : unpublished_) {
    if (!named.count(name)) Add(std::move(name));
  }
  unpublished_.clear();
}

Result<uint64_t> GarbageCollector::Collect(ImageWriter* writer) {
  const auto now = std::chrono::steady_clock::now();
  std::set<std::string> due_once;  // an object may be in the garbage twice
  for (const auto& [when, oid] : due_) {
    if (when <= now) due_once.insert(oid);
  }
  if (due_once.empty()) return uint64_t{0};
  const std::vector<std::string> due(due_once.begin(), due_once.end());
  RadosImage* image = writer->image();
  // Each due object's owner, looked up before the claim is checked: while
  // the manifest still names this writer no successor has made anything,
  // so a removal that holds to that owner cannot take an object a
  // successor made under the same name since (after a removal of this
  // writer's that timed out and yet arrived, say).
  std::vector<Result<std::string>> owners = image->Owners(due, ImageManifest::kOwnerXattr);
  std::vector<RadosImage::OwnedObject> owned;
  std::set<std::string> gone;
  std::optional<Status> lookup_failed;  // the first, for the log: the rest of the batch was not tried
  for (size_t i = 0; i < due.size(); ++i) {
    if (owners[i].ok()) {
      owned.push_back({due[i], std::move(*owners[i])});
    } else if (owners[i].status().IsNotFound()) {
      gone.insert(due[i]);
    } else if (!lookup_failed) {
      lookup_failed = owners[i].status();
    }
  }
  if (lookup_failed) spdlog::warn("{}: looking up garbage: {} (will retry)", writer->name(), lookup_failed->ToString());
  // Not for a writer whose image was taken over.
  if (!owned.empty()) CKPTFS_RETURN_IF_ERROR(writer->CheckClaim());
  const std::vector<Status> removals = image->RemoveIfOwners(owned, ImageManifest::kOwnerXattr);
  uint64_t removed = 0;
  bool remove_failed = false;
  for (size_t i = 0; i < owned.size(); ++i) {
    const Status& s = removals[i];
    if (s.code() == Status::Code::kExists) {
      spdlog::warn("{}: not removing {}: {}", writer->name(), owned[i].oid, s.ToString());
    } else if (!s.ok()) {
      // The first failure; the rest of the batch was not tried.
      if (!remove_failed) spdlog::warn("{}: removing garbage: {} (will retry)", writer->name(), s.ToString());
      remove_failed = true;
      continue;
    } else {
      ++removed;
    }
    gone.insert(owned[i].oid);
  }
  std::erase_if(due_, [&](const auto& g) { return g.first <= now && gone.count(g.second); });
  return removed;
}

}  // namespace ckptfs
