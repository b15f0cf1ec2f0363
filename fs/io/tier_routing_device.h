// TierRoutingDevice: a BlockDevice decorator that sends reads of remote
// addresses (runs evicted to the store's tier, format/physical_extent.h) to
// the tier and everything else to the local device below, so the data log
// and the checker read an evicted run as they read any other.
//
// The tier is attached after the store is open (the daemon connects to it
// after forking) and detached before it goes away; reads of remote runs
// with no tier attached fail with a message that says which mount option
// serves them.
//
// Thread-safe: tier_mu_ is held shared across a remote read, so Detach
// (exclusive) waits for reads using the tier to end.
#pragma once

#include <atomic>
#include <memory>

#include "ckptfs/remote_tier.h"
#include "io/block_device.h"
#include "util/mutex.h"

namespace ckptfs {

class TierRoutingDevice : public BlockDevice {
 public:
  explicit TierRoutingDevice(std::unique_ptr<BlockDevice> local) : local_(std::move(local)) {}

  Status Read(uint64_t offset, void* buf, size_t len) override EXCLUDES(tier_mu_);
  // What the device below lends; runs read from the attached tier are not.
  Result<LentBytes> ReadLent(uint64_t offset, size_t len) override;
  Status Write(uint64_t offset, const void* buf, size_t len) override;
  Status Flush() override { return local_->Flush(); }
  uint64_t size() const override { return local_->size(); }
  Status Provision(uint64_t offset, uint64_t len) override { return local_->Provision(offset, len); }
  uint64_t ProvisionShortfall() const override { return local_->ProvisionShortfall(); }
  bool ServesRemoteRuns() const override EXCLUDES(tier_mu_);

  // Null detaches; waits for remote reads in progress.
  void Attach(RemoteTier* tier) EXCLUDES(tier_mu_);
  RemoteTier* tier() const EXCLUDES(tier_mu_);
  // Runs fn(tier), tier null when none, with the tier kept attached meanwhile.
  template <class Fn>
  void WithTier(Fn&& fn) EXCLUDES(tier_mu_) {
    ReaderLock lock(&tier_mu_);
    fn(tier_);
  }
  BlockDevice* local() const { return local_.get(); }
  // Reads sent to the tier, plus the device's own (a device that is itself
  // an image in the tier).
  RemoteReadCounters remote_counters() const override;

 private:
  const std::unique_ptr<BlockDevice> local_;
  mutable SharedMutex tier_mu_;
  RemoteTier* tier_ GUARDED_BY(tier_mu_) = nullptr;
  std::atomic<uint64_t> remote_reads_{0};
  std::atomic<uint64_t> remote_read_bytes_{0};
};

}  // namespace ckptfs
