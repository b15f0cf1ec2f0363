// RadosImage over librados' C++ API.
#include "rados_image.h"

#include <rados/librados.hpp>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/aligned_buffer.h"

namespace ckptfs {
namespace {

// librados' EBLOCKLISTED: the cluster refuses everything this client sends
// (`ceph osd blocklist`), for good; a new client gets a new address.
constexpr int kBlocklisted = ESHUTDOWN;

// A call's failure (ret < 0, from librados); a fenced client is noted in
// `fenced` and told as such.
Status FailedCall(const std::string& what, int ret, std::atomic<bool>* fenced) {
  if (ret != -kBlocklisted) return Status::IOError(what, -ret);
  fenced->store(true);
  return Status::IOError(what + ": this client is fenced off the cluster (blocklisted, as `ckptfs-tier "
                                "takeover` does to a writer it takes an image from)");
}

// Ceph's default for `ms_async_op_threads`, the client's messenger threads.
constexpr const char* kCephDefaultMessengerThreads = "3";

// The messenger threads for a client that may run on `cores` cores: half of
// them, at least one and at most Ceph's three. Each thread copies and
// checksums what arrives on its sockets (about 2 GB/s of replies a thread
// here), and each keeps its own malloc arena, which holds its own peak of
// reply buffers. On two cores the default three contended with the FUSE
// threads and readers for them, and their three arenas' first touch was
// 17 000 page faults a restore against 8 000 for one
// (docs/tuning.md#messenger-threads).
unsigned MessengerThreadsFor(unsigned cores) { return std::clamp(cores / 2, 1u, 3u); }

// The cores this process may run on (its affinity, which cpusets narrow).
unsigned UsableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
}

// `bytes` as librados takes an xattr's value or an object's contents.
librados::bufferlist BufferOf(std::string_view bytes) {
  librados::bufferlist bl;
  bl.append(bytes.data(), static_cast<unsigned>(bytes.size()));
  return bl;
}

// Runs `start(i, completion)` for i = 0, 1, ... up to n, each starting one
// asynchronous call that tells `completion` (or returning its error, < 0,
// if it could not), with at most `window` of them in flight, and
// `finish(i, ret)` once call i is done, ret being its return value. Once a
// finish returns false (a failure that the rest would only repeat: an
// unreachable cluster times each call out) no more calls start; those in
// flight are finished, and the rest never run.
template <typename Start, typename Finish>
void RunInWindow(size_t n, size_t window, Start start, Finish finish) {
  std::deque<std::pair<size_t, librados::AioCompletion*>> in_flight;
  bool go_on = true;
  auto finish_oldest = [&] {
    auto [i, completion] = in_flight.front();
    in_flight.pop_front();
    completion->wait_for_complete();
    const int ret = completion->get_return_value();
    completion->release();
    go_on = finish(i, ret) && go_on;
  };
  for (size_t i = 0; i < n && go_on; ++i) {
    if (in_flight.size() == window) {
      finish_oldest();
      if (!go_on) break;
    }
    librados::AioCompletion* completion = librados::Rados::aio_create_completion();
    const int ret = start(i, completion);
    if (ret < 0) {  // never submitted
      completion->release();
      go_on = finish(i, ret) && go_on;
      continue;
    }
    in_flight.emplace_back(i, completion);
  }
  while (!in_flight.empty()) finish_oldest();
}

}  // namespace

struct RadosImage::Connection {
  librados::Rados rados;
  librados::IoCtx io;
  ~Connection() {
    io.close();
    rados.shutdown();
  }
};

struct RadosImage::Op::State {
  librados::AioCompletion* completion = nullptr;
  librados::bufferlist bl;
  bool reads = false;
  char* read_into = nullptr;  // reads: where the bytes go once they arrive (null: they stay in bl)
  size_t len = 0;
  std::string what;  // for the error message
  bool waited = false;
  bool signals = false;  // started with a CompletionSignal
  int submit_error = 0;
  std::atomic<bool>* fenced = nullptr;  // the image's: set on EBLOCKLISTED
  const char* refused = nullptr;  // writes: why an owner's check failed (ECANCELED), if it does
};

struct RadosImage::Reply::Bytes {
  librados::bufferlist bl;
};

RadosImage::Reply::Reply(std::unique_ptr<Bytes> bytes) : bytes_(std::move(bytes)) {
  // In one piece, as the messenger receives a frame's data; gathered (a
  // copy) should a reply ever come in several.
  if (!bytes_->bl.is_contiguous()) bytes_->bl.rebuild();
  size_ = bytes_->bl.length();
  data_ = size_ ? bytes_->bl.c_str() : nullptr;
}

RadosImage::Reply::~Reply() = default;

uint32_t RadosImage::Reply::Crc32c() const {
  // The messenger checks with the raw register seeded with all ones, as
  // Payload::Crc32c asks for it.
  return ~bytes_->bl.crc32c(~0u);
}

struct RadosImage::SendBuffer::Memory {
  ceph::bufferptr ptr;
};

RadosImage::SendBuffer::SendBuffer(size_t bytes) : memory_(std::make_unique<Memory>()) {
  // The drain reads the store into it with O_DIRECT (util/aligned_buffer.h).
  memory_->ptr = ceph::bufferptr(
      ceph::buffer::create_aligned(static_cast<unsigned>(bytes), static_cast<unsigned>(DirectIoAlignment(bytes))));
  AdviseHugePages(memory_->ptr.c_str(), bytes);
}

RadosImage::SendBuffer::~SendBuffer() = default;
RadosImage::SendBuffer::SendBuffer(SendBuffer&&) noexcept = default;
RadosImage::SendBuffer& RadosImage::SendBuffer::operator=(SendBuffer&&) noexcept = default;

char* RadosImage::SendBuffer::data() { return memory_->ptr.c_str(); }

size_t RadosImage::SendBuffer::size() const { return memory_->ptr.length(); }

bool RadosImage::SendBuffer::InUse() const { return memory_->ptr.raw_nref() > 1; }

struct RadosImage::Payload::Bytes {
  librados::bufferlist bl;
};

RadosImage::Payload::Payload(SendBuffer* buffer, size_t len) : bytes_(std::make_unique<Bytes>()) {
  ceph::bufferptr& whole = buffer->memory_->ptr;
  // The buffer keeps the checksums taken of it (per offset and length) until
  // told its bytes changed; a zero-length zeroing is that telling, and
  // nothing more. Without it, the messenger would send the new bytes with
  // an earlier payload's checksum, and the OSD would refuse them.
  whole.zero(0, 0, /*crc_reset=*/true);
  bytes_->bl.push_back(ceph::bufferptr(whole, 0, static_cast<unsigned>(len)));
}

RadosImage::Payload::~Payload() = default;
RadosImage::Payload::Payload(Payload&&) noexcept = default;
RadosImage::Payload& RadosImage::Payload::operator=(Payload&&) noexcept = default;

uint32_t RadosImage::Payload::Crc32c() const {
  // The messenger asks for the raw register seeded with all ones, as
  // crc32c::Value computes it before its final inversion.
  return ~bytes_->bl.crc32c(~0u);
}

RadosImage::Op::Op(std::unique_ptr<State> state) : state_(std::move(state)) {}

RadosImage::Op::~Op() {
  if (!state_) return;
  if (!state_->waited) (void)Wait();
  state_->completion->release();
}

Result<size_t> RadosImage::Op::Wait() {
  State& s = *state_;
  s.waited = true;
  int ret = s.submit_error;
  if (ret == 0) {
    // With a signal, also until its callback returned: then the signal may go.
    if (s.signals) {
      s.completion->wait_for_complete_and_cb();
    } else {
      s.completion->wait_for_complete();
    }
    ret = s.completion->get_return_value();
  }
  if (ret == -EEXIST && s.refused) return Status::Exists(s.what + ": the object exists already");
  if (ret == -ECANCELED && s.refused) return Status::Exists(s.what + ": " + s.refused);
  if (ret < 0) return FailedCall(s.what, ret, s.fenced);
  if (!s.reads) return s.len;
  const size_t n = std::min<size_t>(s.bl.length(), s.len);
  if (s.read_into) s.bl.begin().copy(static_cast<unsigned>(n), s.read_into);
  return n;
}

std::unique_ptr<RadosImage::Reply> RadosImage::Op::TakeReply() {
  auto bytes = std::make_unique<Reply::Bytes>();
  bytes->bl = std::move(state_->bl);
  return std::unique_ptr<Reply>(new Reply(std::move(bytes)));
}

bool RadosImage::Op::Done() const {
  const State& s = *state_;
  // librados marks the operation complete before it queues the callback,
  // so a signal's count never moves before Done turns true (WaitBeyond
  // cannot miss a completion), while Wait still waits for the callback.
  return s.submit_error != 0 || s.completion->is_complete();
}

uint64_t RadosImage::CompletionSignal::completions() const {
  MutexLock lock(&mu_);
  return completions_;
}

void RadosImage::CompletionSignal::WaitBeyond(uint64_t seen) {
  MutexLock lock(&mu_);
  while (completions_ <= seen) changed_.Wait(&mu_);
}

void RadosImage::CompletionSignal::Notify(void*, void* arg) {
  auto* signal = static_cast<CompletionSignal*>(arg);
  MutexLock lock(&signal->mu_);
  signal->completions_ += 1;
  signal->changed_.NotifyAll();
}

Result<std::unique_ptr<RadosImage>> RadosImage::Open(const RadosTarget& target) {
  auto c = std::make_unique<Connection>();
  const std::string where = target.ToString() + (target.ceph_conf.empty() ? "" : " (ceph.conf " + target.ceph_conf + ")");
  int ret = c->rados.init(target.ceph_id.empty() ? nullptr : target.ceph_id.c_str());
  if (ret < 0) return Status::IOError("RADOS client init for " + where, -ret);
  ret = c->rados.conf_read_file(target.ceph_conf.empty() ? nullptr : target.ceph_conf.c_str());
  if (ret < 0) {
    return Status::IOError("reading the Ceph configuration for " + where +
                               (target.ceph_conf.empty() ? " (set CEPH_CONF or ceph_conf=)" : ""),
                           -ret);
  }
  // A configuration that chose its messenger threads keeps them; Ceph's
  // default is sized to the node.
  std::string threads;
  if (c->rados.conf_get("ms_async_op_threads", threads) == 0 && threads == kCephDefaultMessengerThreads) {
    ret = c->rados.conf_set("ms_async_op_threads", std::to_string(MessengerThreadsFor(UsableCores())).c_str());
    if (ret < 0) return Status::IOError("setting ms_async_op_threads", -ret);
  }
  // No call may wait forever on a dead monitor or OSD: each fails with
  // ETIMEDOUT instead, and the caller decides to retry.
  const std::string timeout = std::to_string(target.timeout_seconds);
  for (const char* option : {"rados_osd_op_timeout", "rados_mon_op_timeout", "client_mount_timeout"}) {
    ret = c->rados.conf_set(option, timeout.c_str());
    if (ret < 0) return Status::IOError(std::string("setting ") + option, -ret);
  }
  ret = c->rados.connect();
  if (ret < 0) return Status::IOError("cannot reach the Ceph cluster for " + where, -ret);
  ret = c->rados.ioctx_create(target.pool.c_str(), c->io);
  if (ret == -ENOENT) return Status::NotFound("pool " + target.pool + " does not exist (" + where + ")");
  if (ret < 0) return Status::IOError("opening pool " + target.pool + " for " + where, -ret);
  c->io.set_namespace(target.image);
  return std::unique_ptr<RadosImage>(new RadosImage(target, std::move(c)));
}

RadosImage::RadosImage(const RadosTarget& target, std::unique_ptr<Connection> connection)
    : target_(target), connection_(std::move(connection)) {}

RadosImage::~RadosImage() = default;

Status RadosImage::Error(const std::string& what, const std::string& oid, int ret) const {
  return FailedCall(what + " " + target_.ToString() + "/" + oid, ret, &fenced_);
}

std::unique_ptr<RadosImage::Op> RadosImage::StartWrite(const std::string& oid, Payload payload,
                                                       uint64_t offset, const WriteOnceHint& hint,
                                                       const WriteAs& as, CompletionSignal* signal) {
  auto s = std::make_unique<Op::State>();
  s->signals = signal != nullptr;
  s->fenced = &fenced_;
  s->completion = signal ? librados::Rados::aio_create_completion(signal, &CompletionSignal::Notify)
                         : librados::Rados::aio_create_completion();
  s->bl = std::move(payload.bytes_->bl);
  s->len = s->bl.length();
  s->what = "RADOS write of " + target_.ToString() + "/" + oid;
  const std::string xattr(as.xattr);
  const librados::bufferlist token = BufferOf(as.token);
  librados::ObjectWriteOperation op;
  // A message carries its operations' inputs one after another, and an
  // OSD writes a buffer as it is only where it is page-aligned: the bytes go
  // first, since behind the xattr's name and value every write was copied
  // into a new buffer (5% of the OSDs' CPU in a drain:
  // docs/tuning.md#write-bytes-first).
  // The operation applies whole or not at all, so the checks after the
  // write still keep it out. What carries no input goes before it: create,
  // or the existence check that keeps the ENOENT the leading cmpxattr gave
  // (the write would make the object), and the allocation hint, from which
  // BlueStore takes the checksum block as it writes.
  if (as.mode == WriteAs::Mode::kCreate) {
    op.create(/*exclusive=*/true);
  } else {
    op.assert_exists();
  }
  op.set_alloc_hint2(hint.object_bytes, hint.checksum_bytes,
                     LIBRADOS_ALLOC_HINT_FLAG_SEQUENTIAL_WRITE | LIBRADOS_ALLOC_HINT_FLAG_APPEND_ONLY |
                         LIBRADOS_ALLOC_HINT_FLAG_IMMUTABLE | LIBRADOS_ALLOC_HINT_FLAG_SEQUENTIAL_READ);
  op.write(offset, s->bl);
  switch (as.mode) {
    case WriteAs::Mode::kCreate:
      s->refused = "it names another owner";
      op.setxattr(xattr.c_str(), token);
      break;
    case WriteAs::Mode::kTakeOver: {
      s->refused = "its owner changed since it was looked up";
      // A missing xattr compares equal to an empty value.
      op.cmpxattr(xattr.c_str(), LIBRADOS_CMPXATTR_OP_EQ, BufferOf(as.from));
      op.setxattr(xattr.c_str(), token);
      break;
    }
    case WriteAs::Mode::kOwner:
      s->refused = "it names another owner";
      op.cmpxattr(xattr.c_str(), LIBRADOS_CMPXATTR_OP_EQ, token);
      break;
  }
  const int ret = connection_->io.aio_operate(oid, s->completion, &op);
  if (ret < 0) s->submit_error = ret;  // never submitted: Wait reports it
  return std::unique_ptr<Op>(new Op(std::move(s)));
}

std::unique_ptr<RadosImage::Op> RadosImage::StartRead(const std::string& oid, char* buf, size_t len,
                                                      uint64_t offset) {
  auto s = std::make_unique<Op::State>();
  s->completion = librados::Rados::aio_create_completion();
  s->fenced = &fenced_;
  s->len = len;
  s->reads = true;
  s->read_into = buf;
  s->what = "RADOS read of " + target_.ToString() + "/" + oid;
  librados::ObjectReadOperation op;
  op.read(offset, len, &s->bl, nullptr);
  // A segment's bytes are read once per node (a restore, an evicted run
  // brought back, fsck): kept in the OSD's cache they would only push out
  // what it holds for others, and putting them there and trimming them
  // again cost the OSDs 13% of their CPU in a restore
  // (docs/tuning.md#osd-reads-nocache).
  op.set_op_flags2(LIBRADOS_OP_FLAG_FADVISE_NOCACHE);
  const int ret = connection_->io.aio_operate(oid, s->completion, &op, nullptr);
  if (ret < 0) s->submit_error = ret;  // never submitted: Wait reports it
  return std::unique_ptr<Op>(new Op(std::move(s)));
}

std::unique_ptr<RadosImage::Op> RadosImage::StartRead(const std::string& oid, size_t len, uint64_t offset) {
  return StartRead(oid, nullptr, len, offset);
}

Result<size_t> RadosImage::Read(const std::string& oid, char* buf, size_t len, uint64_t offset) {
  return StartRead(oid, buf, len, offset)->Wait();
}

Result<std::string> RadosImage::ReadWhole(const std::string& oid) {
  // The size and the bytes from one operation, so from one version of the
  // object: a stat and then a read of that size would return a prefix of a
  // larger manifest published in between, which fails its checksum.
  for (uint64_t want = 1 << 20;;) {
    librados::ObjectReadOperation op;
    uint64_t size = 0;
    int stat_ret = 0, read_ret = 0;
    librados::bufferlist bl;
    op.stat(&size, nullptr, &stat_ret);
    op.read(0, want, &bl, &read_ret);
    const int ret = connection_->io.operate(oid, &op, nullptr);
    if (ret == -ENOENT) return Status::NotFound(target_.ToString() + " has no object " + oid);
    if (ret < 0) return Error("RADOS read of", oid, ret);
    if (size <= want) return bl.to_str();
    want = size + size / 2;  // grew past the guess: read it all, with room to grow
  }
}

Status RadosImage::WriteWhole(const std::string& oid, const std::string& data) {
  librados::bufferlist bl = BufferOf(data);
  const int ret = connection_->io.write_full(oid, bl);
  return ret < 0 ? Error("RADOS write_full of", oid, ret) : Status::Ok();
}

Status RadosImage::NotOwner(const std::string& what, const std::string& oid) const {
  fenced_.store(true);
  return Status::IOError(what + " " + target_.ToString() + "/" + oid +
                         ": another writer has taken this image over (it names another owner)");
}

Status RadosImage::Claim(const std::string& oid, const std::string& name, const std::string& token) {
  librados::ObjectWriteOperation op;
  op.create(/*exclusive=*/false);
  op.setxattr(name.c_str(), BufferOf(token));
  const int ret = connection_->io.operate(oid, &op);
  return ret < 0 ? Error("RADOS claim of", oid, ret) : Status::Ok();
}

Status RadosImage::WriteWholeIfOwner(const std::string& oid, const std::string& data, const std::string& name,
                                     const std::string& token) {
  // One operation: the check and the write happen together or not at all.
  librados::ObjectWriteOperation op;
  op.cmpxattr(name.c_str(), LIBRADOS_CMPXATTR_OP_EQ, BufferOf(token));
  op.write_full(BufferOf(data));
  const int ret = connection_->io.operate(oid, &op);
  if (ret == -ECANCELED) return NotOwner("RADOS write_full of", oid);
  return ret < 0 ? Error("RADOS write_full of", oid, ret) : Status::Ok();
}

Status RadosImage::CheckOwner(const std::string& oid, const std::string& name, const std::string& token) {
  librados::ObjectReadOperation op;
  op.cmpxattr(name.c_str(), LIBRADOS_CMPXATTR_OP_EQ, BufferOf(token));
  const int ret = connection_->io.operate(oid, &op, nullptr);
  if (ret == -ECANCELED) return NotOwner("RADOS owner check of", oid);
  return ret < 0 ? Error("RADOS owner check of", oid, ret) : Status::Ok();
}

Result<std::string> RadosImage::Owner(const std::string& oid, const std::string& name) {
  return std::move(Owners({oid}, name).front());
}

std::vector<Result<std::string>> RadosImage::Owners(const std::vector<std::string>& oids, const std::string& name) {
  std::vector<Result<std::string>> owners(
      oids.size(), Status::IOError("not looked up: an earlier lookup of the batch failed"));
  std::vector<librados::bufferlist> values(oids.size());
  RunInWindow(
      oids.size(), kBatchWindow,
      [&](size_t i, librados::AioCompletion* completion) {
        return connection_->io.aio_getxattr(oids[i], completion, name.c_str(), values[i]);
      },
      [&](size_t i, int ret) {
        if (ret == -ENODATA) {
          owners[i] = std::string();
        } else if (ret == -ENOENT) {
          owners[i] = Status::NotFound(target_.ToString() + " has no object " + oids[i]);
        } else if (ret < 0) {
          owners[i] = Error("RADOS getxattr of", oids[i], ret);
          return false;
        } else {
          owners[i] = values[i].to_str();
        }
        return true;
      });
  return owners;
}

std::string RadosImage::ClientName() const {
  return "client." + std::to_string(connection_->rados.get_instance_id());
}

Status RadosImage::Remove(const std::string& oid) {
  const int ret = connection_->io.remove(oid);
  return ret < 0 && ret != -ENOENT ? Error("RADOS remove of", oid, ret) : Status::Ok();
}

Status RadosImage::RemoveIfOwner(const std::string& oid, const std::string& name, const std::string& token) {
  return std::move(RemoveIfOwners({{oid, token}}, name).front());
}

std::vector<Status> RadosImage::RemoveIfOwners(const std::vector<OwnedObject>& objects, const std::string& name) {
  return RemoveBatch(objects, &name);
}

std::vector<Status> RadosImage::RemoveEach(const std::vector<std::string>& oids) {
  std::vector<OwnedObject> objects;
  objects.reserve(oids.size());
  for (const std::string& oid : oids) objects.push_back({oid, ""});
  return RemoveBatch(objects, nullptr);
}

std::vector<Status> RadosImage::RemoveBatch(const std::vector<OwnedObject>& objects, const std::string* owner_xattr) {
  std::vector<Status> removed(objects.size(),
                              Status::IOError("not removed: an earlier removal of the batch failed"));
  RunInWindow(
      objects.size(), kBatchWindow,
      [&](size_t i, librados::AioCompletion* completion) {
        librados::ObjectWriteOperation op;
        if (owner_xattr) op.cmpxattr(owner_xattr->c_str(), LIBRADOS_CMPXATTR_OP_EQ, BufferOf(objects[i].owner));
        op.remove();
        return connection_->io.aio_operate(objects[i].oid, completion, &op);
      },
      [&](size_t i, int ret) {
        const std::string& oid = objects[i].oid;
        if (ret == -ECANCELED) {
          removed[i] = Status::Exists("RADOS remove of " + target_.ToString() + "/" + oid + ": it names another owner");
        } else if (ret < 0 && ret != -ENOENT) {
          removed[i] = Error("RADOS remove of", oid, ret);
          return false;
        } else {
          removed[i] = Status::Ok();
        }
        return true;
      });
  return removed;
}

Result<std::vector<std::string>> RadosImage::List() {
  std::vector<std::string> names;
  try {
    for (auto it = connection_->io.nobjects_begin(); it != connection_->io.nobjects_end(); ++it) {
      names.push_back(it->get_oid());
    }
  } catch (const std::exception& e) {
    return Status::IOError("listing " + target_.ToString() + ": " + e.what());
  }
  return names;
}

Status RadosImage::Lock(const std::string& oid, const std::string& name, const std::string& cookie,
                        const std::string& description) {
  const int ret = connection_->io.lock_exclusive(oid, name, cookie, description, nullptr, 0);
  if (ret == -EBUSY || ret == -EEXIST) {
    return Status::Busy(target_.ToString() + " is locked by another writer");
  }
  return ret < 0 ? Error("RADOS lock of", oid, ret) : Status::Ok();
}

Status RadosImage::Unlock(const std::string& oid, const std::string& name, const std::string& cookie) {
  const int ret = connection_->io.unlock(oid, name, cookie);
  return ret < 0 && ret != -ENOENT ? Error("RADOS unlock of", oid, ret) : Status::Ok();
}

Result<std::vector<RadosImage::Locker>> RadosImage::Lockers(const std::string& oid,
                                                            const std::string& name) {
  int exclusive = 0;
  std::string tag;
  std::list<librados::locker_t> lockers;
  const int ret = connection_->io.list_lockers(oid, name, &exclusive, &tag, &lockers);
  if (ret == -ENOENT) return std::vector<Locker>{};
  if (ret < 0) return Error("RADOS list_lockers of", oid, ret);
  std::vector<Locker> out;
  for (const auto& l : lockers) out.push_back(Locker{l.client, l.cookie, l.address});
  return out;
}

Status RadosImage::BreakLock(const std::string& oid, const std::string& name, const Locker& locker) {
  const int ret = connection_->io.break_lock(oid, name, locker.client, locker.cookie);
  return ret < 0 && ret != -ENOENT ? Error("RADOS break_lock of", oid, ret) : Status::Ok();
}

Status RadosImage::Fence(const Locker& locker) {
  int ret = connection_->rados.blocklist_add(locker.address, 0);
  if (ret == -EACCES || ret == -EPERM) {
    return Status::Permission("fencing " + locker.client + " at " + locker.address + ": the cluster refuses `osd "
                              "blocklist` to this client (" + std::strerror(-ret) + ")");
  }
  if (ret < 0) return Status::IOError("fencing " + locker.client + " at " + locker.address, -ret);
  // Then this client's next calls carry the map that holds the fence, and
  // OSDs serve them only once they have it too.
  ret = connection_->rados.wait_for_latest_osdmap();
  if (ret < 0) return Status::IOError("fetching the OSD map after fencing " + locker.client, -ret);
  return Status::Ok();
}

}  // namespace ckptfs
