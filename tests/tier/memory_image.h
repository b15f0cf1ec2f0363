// MemoryImage: a RadosImage whose objects live in a MemoryCluster, in this
// process, for the drain protocol's tests (in the spirit of Ceph's own
// librados test stub). Several clients (Connect) share one cluster, each
// with its own name and address, so one can break another's lock, fence
// it or take its image over, as writers on two nodes would.
//
// It keeps what the drain relies on of RADOS and nothing more: an object's
// bytes and xattrs; writes that check and set an owner xattr with the
// write, whole or not at all; exclusive advisory locks with cookies; a
// blocklist that fails every later call of a fenced client; batches that
// stop at their first failure. Operations complete at once.
//
// Any call may be made to fail (MemoryCluster::Inject): refused, as a full
// cluster or a request that never arrived would be, or failed and yet
// applied, as a write that timed out and landed later is; a fault may also
// run the test's code first (another writer taking the image over just
// then).
#pragma once

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rados_image.h"
#include "util/mutex.h"

namespace ckptfs::testing {

class MemoryImage;

class MemoryCluster {
 public:
  static constexpr const char* kPool = "memory";

  // A new client of `image` (a namespace of the cluster's one pool).
  std::unique_ptr<RadosImage> Connect(const std::string& image, unsigned timeout_seconds = 30);

  // The calls a fault may hit.
  enum class Call { kWrite, kRead, kReadWhole, kWriteWhole, kRemove, kOwner, kCheckOwner, kClaim, kList, kLock };
  enum class Outcome {
    kRefused,      // fails and changes nothing
    kFailedLater,  // fails, and yet takes effect: a reply lost, or a request that timed out and landed
    kGoesOn,       // only runs `first`; the call goes on as it would
  };
  struct Fault {
    Call call;
    Outcome outcome = Outcome::kRefused;
    int error = ETIMEDOUT;       // the errno it fails with
    std::string oid_prefix = {};  // only calls on objects whose names start so
    int skip = 0;                // calls that match and pass before it fires
    int times = 1;               // how often it fires
    std::function<void()> first = {};  // run as it fires, before the call goes on, with no lock held
  };
  void Inject(Fault fault) EXCLUDES(mu_);
  // How many calls of the kind clients made (failed ones too).
  uint64_t Calls(Call call) const EXCLUDES(mu_);
  // How long each write takes to complete; none by default.
  void SetWriteLatency(std::chrono::microseconds latency) EXCLUDES(mu_);

 private:
  friend class MemoryImage;
  struct Object {
    std::string data;
    std::map<std::string, std::string> xattrs;
  };
  struct Image {
    std::map<std::string, Object> objects;
    std::map<std::string, std::vector<RadosImage::Locker>> locks;  // by "oid/lock name"
  };
  // The fault that fires for this call, if one does; counts the call.
  std::optional<Fault> Fire(Call call, const std::string& oid) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, Image> images_ GUARDED_BY(mu_);
  std::set<std::string> blocklist_ GUARDED_BY(mu_);  // addresses
  uint64_t next_client_ GUARDED_BY(mu_) = 4100;
  std::vector<Fault> faults_ GUARDED_BY(mu_);
  std::map<Call, uint64_t> calls_ GUARDED_BY(mu_);
  std::chrono::microseconds write_latency_ GUARDED_BY(mu_){0};
};

}  // namespace ckptfs::testing
