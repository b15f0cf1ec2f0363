// LibradosImage: RadosImage over a real cluster, through librados' C++ API;
// the only code that includes librados.
//
// The connection is made with the target's timeout set for monitor and OSD
// operations, so a dead OSD or monitor turns into an error (ETIMEDOUT)
// that the caller retries; errno from librados is kept in each message.
// Thread-safe, as librados is.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "rados_image.h"

namespace ckptfs {

class LibradosImage : public RadosImage {
 public:
  // Connects to the cluster and opens the pool; NotFound when the pool does
  // not exist, IOError with the reason when the cluster cannot be reached.
  // Unless the configuration sets `ms_async_op_threads` to other than
  // Ceph's default (3), the client runs half as many messenger threads as
  // the process may use cores, one to three.
  static Result<std::unique_ptr<RadosImage>> Open(const RadosTarget& target);
  ~LibradosImage() override;

  const RadosTarget& target() const override { return target_; }
  std::string ClientName() const override;
  std::unique_ptr<Op> StartWrite(const std::string& oid, Payload payload, uint64_t offset,
                                 const WriteOnceHint& hint, const WriteAs& as,
                                 CompletionSignal* signal = nullptr) override;
  using RadosImage::StartRead;
  std::unique_ptr<Op> StartRead(const std::string& oid, char* buf, size_t len, uint64_t offset) override;
  Result<std::string> ReadWhole(const std::string& oid) override;
  Status WriteWhole(const std::string& oid, const std::string& data) override;
  Result<std::vector<std::string>> List() override;
  std::vector<Status> RemoveObjects(const std::vector<OwnedObject>& objects,
                                    const std::string* owner_xattr) override;
  Status Lock(const std::string& oid, const std::string& name, const std::string& cookie,
              const std::string& description) override;
  Status Unlock(const std::string& oid, const std::string& name, const std::string& cookie) override;
  Result<std::vector<Locker>> Lockers(const std::string& oid, const std::string& name) override;
  Status BreakLock(const std::string& oid, const std::string& name, const Locker& locker) override;
  Status Fence(const Locker& locker) override;
  bool Fenced() const override { return fenced_.load(); }
  Status Claim(const std::string& oid, const std::string& name, const std::string& token) override;
  Status WriteWholeIfOwner(const std::string& oid, const std::string& data, const std::string& name,
                           const std::string& token) override;
  Status CheckOwner(const std::string& oid, const std::string& name, const std::string& token) override;
  std::vector<Result<std::string>> Owners(const std::vector<std::string>& oids, const std::string& name) override;

 private:
  struct Connection;  // librados' cluster handle and the pool's I/O context
  class AsyncOp;      // an Op over a librados completion
  class BufferReply;  // a Reply over a librados bufferlist
  LibradosImage(const RadosTarget& target, std::unique_ptr<Connection> connection);
  Status Error(const std::string& what, const std::string& oid, int ret) const;
  // A call refused because another token owns `oid` (ECANCELED from its
  // cmpxattr): this client is fenced off from then on.
  Status NotOwner(const std::string& what, const std::string& oid) const;

  const RadosTarget target_;
  const std::unique_ptr<Connection> connection_;
  mutable std::atomic<bool> fenced_{false};  // a call failed with EBLOCKLISTED, or found another owner
};

}  // namespace ckptfs
