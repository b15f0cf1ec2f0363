// MemoryImage and MemoryCluster: see memory_image.h.
#include "memory_image.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "util/crc32c.h"

namespace ckptfs::testing {
namespace {

using Call = MemoryCluster::Call;
using Outcome = MemoryCluster::Outcome;

class StringReply : public RadosImage::Reply {
 public:
  explicit StringReply(std::string bytes) : bytes_(std::move(bytes)) {}
  const char* data() const override { return bytes_.data(); }
  size_t size() const override { return bytes_.size(); }
  uint32_t Crc32c() const override { return crc32c::Value(bytes_.data(), bytes_.size()); }

 private:
  const std::string bytes_;
};

// An operation that completed as it started.
class DoneOp : public RadosImage::Op {
 public:
  DoneOp(Result<size_t> result, std::string reply) : result_(std::move(result)), reply_(std::move(reply)) {}
  Result<size_t> Wait() override { return result_; }
  std::unique_ptr<RadosImage::Reply> TakeReply() override { return std::make_unique<StringReply>(std::move(reply_)); }
  bool Done() const override { return true; }

 private:
  const Result<size_t> result_;
  std::string reply_;
};

}  // namespace

class MemoryImage : public RadosImage {
 public:
  MemoryImage(MemoryCluster* cluster, RadosTarget target, uint64_t client)
      : cluster_(cluster), target_(std::move(target)), client_(client),
        address_("10.0.0.1:0/" + std::to_string(client)) {}

  const RadosTarget& target() const override { return target_; }
  std::string ClientName() const override { return "client." + std::to_string(client_); }
  bool Fenced() const override { return fenced_.load(); }

  std::unique_ptr<Op> StartWrite(const std::string& oid, Payload payload, uint64_t offset,
                                 const WriteOnceHint&, const WriteAs& as, CompletionSignal* signal) override {
    const std::string what = "RADOS write of " + Where(oid);
    std::chrono::microseconds latency{0};
    {
      MutexLock lock(&cluster_->mu_);
      latency = cluster_->write_latency_;
    }
    if (latency.count() > 0) std::this_thread::sleep_for(latency);
    Result<size_t> result = Write(what, oid, payload.bytes(), offset, as);
    if (signal != nullptr) signal->Count();
    return std::make_unique<DoneOp>(std::move(result), "");
  }

  using RadosImage::StartRead;
  std::unique_ptr<Op> StartRead(const std::string& oid, char* buf, size_t len, uint64_t offset) override {
    const std::string what = "RADOS read of " + Where(oid);
    Attempt a = Begin(Call::kRead, what, oid);
    if (a.refused) return std::make_unique<DoneOp>(*a.refused, "");
    MutexLock lock(&cluster_->mu_);
    const MemoryCluster::Object* object = Find(oid);
    if (object == nullptr) return std::make_unique<DoneOp>(Status::IOError(what, ENOENT), "");
    const std::string bytes = offset < object->data.size() ? object->data.substr(offset, len) : "";
    if (buf != nullptr) std::memcpy(buf, bytes.data(), bytes.size());
    return std::make_unique<DoneOp>(bytes.size(), buf != nullptr ? "" : bytes);
  }

  Result<std::string> ReadWhole(const std::string& oid) override {
    Attempt a = Begin(Call::kReadWhole, "RADOS read of " + Where(oid), oid);
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    const MemoryCluster::Object* object = Find(oid);
    if (object == nullptr) return Status::NotFound(target_.ToString() + " has no object " + oid);
    return object->data;
  }

  Status WriteWhole(const std::string& oid, const std::string& data) override {
    Attempt a = Begin(Call::kWriteWhole, "RADOS write_full of " + Where(oid), oid);
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    Objects()[oid].data = data;
    return a.Result();
  }

  Result<std::vector<std::string>> List() override {
    Attempt a = Begin(Call::kList, "listing " + target_.ToString(), "");
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    std::vector<std::string> names;
    for (const auto& [name, object] : Objects()) names.push_back(name);
    return names;
  }

  std::vector<Status> RemoveObjects(const std::vector<OwnedObject>& objects, const std::string* owner_xattr) override {
    std::vector<Status> removed(objects.size(), Status::IOError("not removed: an earlier removal of the batch failed"));
    for (size_t i = 0; i < objects.size(); ++i) {
      const std::string& oid = objects[i].oid;
      Attempt a = Begin(Call::kRemove, "RADOS remove of " + Where(oid), oid);
      if (a.refused) {
        removed[i] = *a.refused;
        break;
      }
      MutexLock lock(&cluster_->mu_);
      const MemoryCluster::Object* object = Find(oid);
      if (object != nullptr && owner_xattr != nullptr && OwnerOf(*object, *owner_xattr) != objects[i].owner) {
        removed[i] = Status::Exists("RADOS remove of " + Where(oid) + ": it names another owner");
        continue;
      }
      Objects().erase(oid);
      removed[i] = a.Result();
      if (!removed[i].ok()) break;
    }
    return removed;
  }

  Status Lock(const std::string& oid, const std::string& name, const std::string& cookie,
              const std::string&) override {
    Attempt a = Begin(Call::kLock, "RADOS lock of " + Where(oid), oid);
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    std::vector<Locker>& holders = LocksOf(oid, name);
    if (!holders.empty()) return Status::Busy(target_.ToString() + " is locked by another writer");
    holders.push_back(Locker{ClientName(), cookie, address_});
    Objects()[oid];  // a lock makes its object, as in RADOS
    return a.Result();
  }

  Status Unlock(const std::string& oid, const std::string& name, const std::string& cookie) override {
    Attempt a = Begin(Call::kLock, "RADOS unlock of " + Where(oid), oid);
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    std::erase_if(LocksOf(oid, name),
                  [&](const Locker& l) { return l.client == ClientName() && l.cookie == cookie; });
    return a.Result();
  }

  Result<std::vector<Locker>> Lockers(const std::string& oid, const std::string& name) override {
    Attempt a = Begin(Call::kLock, "RADOS list_lockers of " + Where(oid), oid);
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    return LocksOf(oid, name);
  }

  Status BreakLock(const std::string& oid, const std::string& name, const Locker& locker) override {
    Attempt a = Begin(Call::kLock, "RADOS break_lock of " + Where(oid), oid);
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    std::erase_if(LocksOf(oid, name),
                  [&](const Locker& l) { return l.client == locker.client && l.cookie == locker.cookie; });
    return a.Result();
  }

  Status Fence(const Locker& locker) override {
    Attempt a = Begin(Call::kLock, "fencing " + locker.client, "");
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    cluster_->blocklist_.insert(locker.address);
    return a.Result();
  }

  Status Claim(const std::string& oid, const std::string& name, const std::string& token) override {
    Attempt a = Begin(Call::kClaim, "RADOS claim of " + Where(oid), oid);
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    Objects()[oid].xattrs[name] = token;
    return a.Result();
  }

  Status WriteWholeIfOwner(const std::string& oid, const std::string& data, const std::string& name,
                           const std::string& token) override {
    const std::string what = "RADOS write_full of " + Where(oid);
    Attempt a = Begin(Call::kWriteWhole, what, oid);
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    MemoryCluster::Object* object = Find(oid);
    if (object == nullptr) return Status::IOError(what, ENOENT);
    if (OwnerOf(*object, name) != token) return NotOwner(what);
    object->data = data;
    return a.Result();
  }

  Status CheckOwner(const std::string& oid, const std::string& name, const std::string& token) override {
    const std::string what = "RADOS owner check of " + Where(oid);
    Attempt a = Begin(Call::kCheckOwner, what, oid);
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    const MemoryCluster::Object* object = Find(oid);
    if (object == nullptr) return Status::IOError(what, ENOENT);
    if (OwnerOf(*object, name) != token) return NotOwner(what);
    return a.Result();
  }

  std::vector<Result<std::string>> Owners(const std::vector<std::string>& oids, const std::string& name) override {
    std::vector<Result<std::string>> owners(oids.size(),
                                            Status::IOError("not looked up: an earlier lookup of the batch failed"));
    for (size_t i = 0; i < oids.size(); ++i) {
      Attempt a = Begin(Call::kOwner, "RADOS getxattr of " + Where(oids[i]), oids[i]);
      if (a.refused) {
        owners[i] = *a.refused;
        break;
      }
      MutexLock lock(&cluster_->mu_);
      const MemoryCluster::Object* object = Find(oids[i]);
      if (object == nullptr) {
        owners[i] = Status::NotFound(target_.ToString() + " has no object " + oids[i]);
      } else {
        owners[i] = OwnerOf(*object, name);
      }
    }
    return owners;
  }

 private:
  // How a call goes, decided as it begins: refused (nothing happens), or
  // on, to fail once done with `late` (applied, reported failed).
  struct Attempt {
    std::optional<Status> refused;
    std::optional<Status> late;
    Status Result() const { return late.value_or(Status::Ok()); }
  };

  Attempt Begin(Call call, const std::string& what, const std::string& oid) EXCLUDES(cluster_->mu_) {
    std::optional<MemoryCluster::Fault> fault;
    {
      MutexLock lock(&cluster_->mu_);
      if (cluster_->blocklist_.count(address_)) {
        fenced_.store(true);
        return Attempt{Status::IOError(what + ": this client is fenced off the cluster (blocklisted)"), {}};
      }
      fault = cluster_->Fire(call, oid);
    }
    if (!fault) return {};
    if (fault->first) fault->first();
    const Status failed = Status::IOError(what, fault->error);
    switch (fault->outcome) {
      case Outcome::kRefused:
        return Attempt{failed, {}};
      case Outcome::kFailedLater:
        return Attempt{{}, failed};
      case Outcome::kGoesOn:
        break;
    }
    return {};
  }

  Result<size_t> Write(const std::string& what, const std::string& oid, std::string_view bytes, uint64_t offset,
                       const WriteAs& as) {
    Attempt a = Begin(Call::kWrite, what, oid);
    if (a.refused) return *a.refused;
    MutexLock lock(&cluster_->mu_);
    MemoryCluster::Object* object = Find(oid);
    const std::string xattr(as.xattr);
    switch (as.mode) {
      case WriteAs::Mode::kCreate:
        if (object != nullptr) return Status::Exists(what + ": the object exists already");
        object = &Objects()[oid];
        break;
      case WriteAs::Mode::kTakeOver:
        if (object == nullptr) return Status::IOError(what, ENOENT);
        if (OwnerOf(*object, xattr) != as.from) return Status::Exists(what + ": its owner changed since it was looked up");
        break;
      case WriteAs::Mode::kOwner:
        if (object == nullptr) return Status::IOError(what, ENOENT);
        if (OwnerOf(*object, xattr) != as.token) return Status::Exists(what + ": it names another owner");
        break;
    }
    if (object->data.size() < offset + bytes.size()) object->data.resize(offset + bytes.size(), '\0');
    object->data.replace(offset, bytes.size(), bytes);
    if (as.mode != WriteAs::Mode::kOwner) object->xattrs[xattr] = std::string(as.token);
    if (a.late) return *a.late;
    return bytes.size();
  }

  std::string Where(const std::string& oid) const { return target_.ToString() + "/" + oid; }

  Status NotOwner(const std::string& what) {
    fenced_.store(true);
    return Status::IOError(what + ": another writer has taken this image over (it names another owner)");
  }

  static std::string OwnerOf(const MemoryCluster::Object& object, const std::string& xattr) {
    auto it = object.xattrs.find(xattr);
    return it == object.xattrs.end() ? "" : it->second;  // no xattr compares equal to an empty one
  }

  std::map<std::string, MemoryCluster::Object>& Objects() REQUIRES(cluster_->mu_) {
    return cluster_->images_[target_.image].objects;
  }
  MemoryCluster::Object* Find(const std::string& oid) REQUIRES(cluster_->mu_) {
    auto& objects = Objects();
    auto it = objects.find(oid);
    return it == objects.end() ? nullptr : &it->second;
  }
  std::vector<Locker>& LocksOf(const std::string& oid, const std::string& name) REQUIRES(cluster_->mu_) {
    return cluster_->images_[target_.image].locks[oid + "/" + name];
  }

  MemoryCluster* const cluster_;
  const RadosTarget target_;
  const uint64_t client_;
  const std::string address_;
  std::atomic<bool> fenced_{false};
};

std::unique_ptr<RadosImage> MemoryCluster::Connect(const std::string& image, unsigned timeout_seconds) {
  RadosTarget target;
  target.pool = kPool;
  target.image = image;
  target.timeout_seconds = timeout_seconds;
  MutexLock lock(&mu_);
  return std::make_unique<MemoryImage>(this, std::move(target), next_client_++);
}

void MemoryCluster::Inject(Fault fault) {
  MutexLock lock(&mu_);
  faults_.push_back(std::move(fault));
}

uint64_t MemoryCluster::Calls(Call call) const {
  MutexLock lock(&mu_);
  auto it = calls_.find(call);
  return it == calls_.end() ? 0 : it->second;
}

void MemoryCluster::SetWriteLatency(std::chrono::microseconds latency) {
  MutexLock lock(&mu_);
  write_latency_ = latency;
}

std::optional<MemoryCluster::Fault> MemoryCluster::Fire(Call call, const std::string& oid) {
  ++calls_[call];
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (it->call != call || oid.rfind(it->oid_prefix, 0) != 0) continue;
    if (it->skip > 0) {
      --it->skip;
      continue;
    }
    Fault fired = *it;
    if (--it->times <= 0) faults_.erase(it);
    return fired;
  }
  return std::nullopt;
}

}  // namespace ckptfs::testing
