// TierRoutingDevice: see tier_routing_device.h.
#include "io/tier_routing_device.h"

#include <string>

#include "format/physical_extent.h"

namespace ckptfs {

Status TierRoutingDevice::Read(uint64_t offset, void* buf, size_t len) {
  const PhysicalExtent at{offset};
  // A device that is itself an image in the tier serves remote runs.
  if (!at.remote() || local_->ServesRemoteRuns()) return local_->Read(offset, buf, len);
  ReaderLock lock(&tier_mu_);
  if (tier_ == nullptr) {
    return Status::IOError("the run at remote object " + std::to_string(at.remote_object()) +
                           " offset " + std::to_string(at.remote_offset()) +
                           " was evicted to the store's RADOS tier, which this mount is not "
                           "attached to: mount the store with its -o tier= (read-only too), or "
                           "mount the image itself (ckptfs rados:POOL/NAME)");
  }
  remote_reads_.fetch_add(1, std::memory_order_relaxed);
  remote_read_bytes_.fetch_add(len, std::memory_order_relaxed);
  return tier_->ReadRemote(at.remote_object(), at.remote_offset(), buf, len);
}

Result<LentBytes> TierRoutingDevice::ReadLent(uint64_t offset, size_t len) {
  if (!PhysicalExtent{offset}.remote() || local_->ServesRemoteRuns()) return local_->ReadLent(offset, len);
  return LentBytes{};
}

Status TierRoutingDevice::Write(uint64_t offset, const void* buf, size_t len) {
  if (PhysicalExtent{offset}.remote()) {
    return Status::Invalid("write to a remote address " + std::to_string(offset));
  }
  return local_->Write(offset, buf, len);
}

bool TierRoutingDevice::ServesRemoteRuns() const {
  if (local_->ServesRemoteRuns()) return true;
  ReaderLock lock(&tier_mu_);
  return tier_ != nullptr;
}

RemoteReadCounters TierRoutingDevice::remote_counters() const {
  RemoteReadCounters c = local_->remote_counters();
  c.reads += remote_reads_.load();
  c.bytes += remote_read_bytes_.load();
  return c;
}

void TierRoutingDevice::Attach(RemoteTier* tier) {
  WriterLock lock(&tier_mu_);
  tier_ = tier;
}

RemoteTier* TierRoutingDevice::tier() const {
  ReaderLock lock(&tier_mu_);
  return tier_;
}

}  // namespace ckptfs
