// LibradosImage: see librados_image.h.
#include "librados_image.h"

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

struct LibradosImage::Connection {
  librados::Rados rados;
  librados::IoCtx io;
  ~Connection() {
    io.close();
    rados.shutdown();
  }
};

class LibradosImage::BufferReply : public RadosImage::Reply {
 public:
  explicit BufferReply(librados::bufferlist bl) : bl_(std::move(bl)) {
    // In one piece, as the messenger receives a frame's data; gathered (a
    // copy) should a reply ever come in several.
    if (!bl_.is_contiguous()) bl_.rebuild();
    size_ = bl_.length();
    data_ = size_ ? bl_.c_str() : nullptr;
  }
  const char* data() const override { return data_; }
  size_t size() const override { return size_; }
  uint32_t Crc32c() const override {
    // The messenger checks with the raw register seeded with all ones, as
    // Payload::Crc32c asks for it.
    return ~bl_.crc32c(~0u);
  }

 private:
  librados::bufferlist bl_;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

class LibradosImage::AsyncOp : public RadosImage::Op {
 public:
  AsyncOp(std::string what, std::atomic<bool>* fenced, CompletionSignal* signal)
      : what_(std::move(what)), fenced_(fenced), signals_(signal != nullptr),
        completion_(signal ? librados::Rados::aio_create_completion(signal, &CountCompletion)
                           : librados::Rados::aio_create_completion()) {}
  ~AsyncOp() override {
    if (!waited_) (void)Wait();
    completion_->release();
  }
  Result<size_t> Wait() override;
  std::unique_ptr<Reply> TakeReply() override {
    return std::make_unique<BufferReply>(std::move(bl_));
  }
  bool Done() const override {
    // librados marks the operation complete before it queues the callback,
    // so a signal's count never moves before Done turns true (WaitBeyond
    // cannot miss a completion), while Wait still waits for the callback.
    return submit_error_ != 0 || completion_->is_complete();
  }

  librados::AioCompletion* completion() { return completion_; }
  librados::bufferlist* bl() { return &bl_; }
  // Reads: where the bytes go once they arrive (null: they stay for TakeReply).
  void ReadInto(char* buf, size_t len) {
    reads_ = true;
    read_into_ = buf;
    len_ = len;
  }
  void Writes(librados::bufferlist bl, const char* refused) {
    bl_ = std::move(bl);
    len_ = bl_.length();
    refused_ = refused;
  }
  void Submitted(int ret) {
    if (ret < 0) submit_error_ = ret;  // never submitted: Wait reports it
  }

 private:
  static void CountCompletion(void*, void* signal) { static_cast<CompletionSignal*>(signal)->Count(); }

  const std::string what_;  // for the error message
  std::atomic<bool>* const fenced_;  // the image's: set on EBLOCKLISTED
  const bool signals_;  // started with a CompletionSignal
  librados::AioCompletion* const completion_;
  librados::bufferlist bl_;
  bool reads_ = false;
  char* read_into_ = nullptr;
  size_t len_ = 0;
  bool waited_ = false;
  int submit_error_ = 0;
  const char* refused_ = nullptr;  // writes: why an owner's check failed (ECANCELED), if it does
};

Result<size_t> LibradosImage::AsyncOp::Wait() {
  waited_ = true;
  int ret = submit_error_;
  if (ret == 0) {
    // With a signal, also until its callback returned: then the signal may go.
    if (signals_) {
      completion_->wait_for_complete_and_cb();
    } else {
      completion_->wait_for_complete();
    }
    ret = completion_->get_return_value();
  }
  if (ret == -EEXIST && refused_) return Status::Exists(what_ + ": the object exists already");
  if (ret == -ECANCELED && refused_) return Status::Exists(what_ + ": " + refused_);
  if (ret < 0) return FailedCall(what_, ret, fenced_);
  if (!reads_) return len_;
  const size_t n = std::min<size_t>(bl_.length(), len_);
  if (read_into_) bl_.begin().copy(static_cast<unsigned>(n), read_into_);
  return n;
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

std::string_view RadosImage::Payload::bytes() const {
  // One piece of one buffer (the constructor's), so contiguous.
  const ceph::bufferptr& piece = bytes_->bl.front();
  return {piece.c_str(), piece.length()};
}

Result<std::unique_ptr<RadosImage>> LibradosImage::Open(const RadosTarget& target) {
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
  return std::unique_ptr<RadosImage>(new LibradosImage(target, std::move(c)));
}

LibradosImage::LibradosImage(const RadosTarget& target, std::unique_ptr<Connection> connection)
    : target_(target), connection_(std::move(connection)) {}

LibradosImage::~LibradosImage() = default;

Status LibradosImage::Error(const std::string& what, const std::string& oid, int ret) const {
  return FailedCall(what + " " + target_.ToString() + "/" + oid, ret, &fenced_);
}

std::unique_ptr<RadosImage::Op> LibradosImage::StartWrite(const std::string& oid, Payload payload,
                                                          uint64_t offset, const WriteOnceHint& hint,
                                                          const WriteAs& as, CompletionSignal* signal) {
  auto s = std::make_unique<AsyncOp>("RADOS write of " + target_.ToString() + "/" + oid, &fenced_, signal);
  s->Writes(std::move(payload.bytes_->bl), as.mode == WriteAs::Mode::kTakeOver
                                               ? "its owner changed since it was looked up"
                                               : "it names another owner");
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
  op.write(offset, *s->bl());
  switch (as.mode) {
    case WriteAs::Mode::kCreate:
      op.setxattr(xattr.c_str(), token);
      break;
    case WriteAs::Mode::kTakeOver: {
      // A missing xattr compares equal to an empty value.
      op.cmpxattr(xattr.c_str(), LIBRADOS_CMPXATTR_OP_EQ, BufferOf(as.from));
      op.setxattr(xattr.c_str(), token);
      break;
    }
    case WriteAs::Mode::kOwner:
      op.cmpxattr(xattr.c_str(), LIBRADOS_CMPXATTR_OP_EQ, token);
      break;
  }
  s->Submitted(connection_->io.aio_operate(oid, s->completion(), &op));
  return s;
}

std::unique_ptr<RadosImage::Op> LibradosImage::StartRead(const std::string& oid, char* buf, size_t len,
                                                         uint64_t offset) {
  auto s = std::make_unique<AsyncOp>("RADOS read of " + target_.ToString() + "/" + oid, &fenced_, nullptr);
  s->ReadInto(buf, len);
  librados::ObjectReadOperation op;
  op.read(offset, len, s->bl(), nullptr);
  // A segment's bytes are read once per node (a restore, an evicted run
  // brought back, fsck): kept in the OSD's cache they would only push out
  // what it holds for others, and putting them there and trimming them
  // again cost the OSDs 13% of their CPU in a restore
  // (docs/tuning.md#osd-reads-nocache).
  op.set_op_flags2(LIBRADOS_OP_FLAG_FADVISE_NOCACHE);
  s->Submitted(connection_->io.aio_operate(oid, s->completion(), &op, nullptr));
  return s;
}

Result<std::string> LibradosImage::ReadWhole(const std::string& oid) {
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

Status LibradosImage::WriteWhole(const std::string& oid, const std::string& data) {
  librados::bufferlist bl = BufferOf(data);
  const int ret = connection_->io.write_full(oid, bl);
  return ret < 0 ? Error("RADOS write_full of", oid, ret) : Status::Ok();
}

Status LibradosImage::NotOwner(const std::string& what, const std::string& oid) const {
  fenced_.store(true);
  return Status::IOError(what + " " + target_.ToString() + "/" + oid +
                         ": another writer has taken this image over (it names another owner)");
}

Status LibradosImage::Claim(const std::string& oid, const std::string& name, const std::string& token) {
  librados::ObjectWriteOperation op;
  op.create(/*exclusive=*/false);
  op.setxattr(name.c_str(), BufferOf(token));
  const int ret = connection_->io.operate(oid, &op);
  return ret < 0 ? Error("RADOS claim of", oid, ret) : Status::Ok();
}

Status LibradosImage::WriteWholeIfOwner(const std::string& oid, const std::string& data, const std::string& name,
                                     const std::string& token) {
  // One operation: the check and the write happen together or not at all.
  librados::ObjectWriteOperation op;
  op.cmpxattr(name.c_str(), LIBRADOS_CMPXATTR_OP_EQ, BufferOf(token));
  op.write_full(BufferOf(data));
  const int ret = connection_->io.operate(oid, &op);
  if (ret == -ECANCELED) return NotOwner("RADOS write_full of", oid);
  return ret < 0 ? Error("RADOS write_full of", oid, ret) : Status::Ok();
}

Status LibradosImage::CheckOwner(const std::string& oid, const std::string& name, const std::string& token) {
  librados::ObjectReadOperation op;
  op.cmpxattr(name.c_str(), LIBRADOS_CMPXATTR_OP_EQ, BufferOf(token));
  const int ret = connection_->io.operate(oid, &op, nullptr);
  if (ret == -ECANCELED) return NotOwner("RADOS owner check of", oid);
  return ret < 0 ? Error("RADOS owner check of", oid, ret) : Status::Ok();
}

std::vector<Result<std::string>> LibradosImage::Owners(const std::vector<std::string>& oids, const std::string& name) {
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

std::string LibradosImage::ClientName() const {
  return "client." + std::to_string(connection_->rados.get_instance_id());
}

std::vector<Status> LibradosImage::RemoveObjects(const std::vector<OwnedObject>& objects,
                                                 const std::string* owner_xattr) {
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

Result<std::vector<std::string>> LibradosImage::List() {
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

Status LibradosImage::Lock(const std::string& oid, const std::string& name, const std::string& cookie,
                        const std::string& description) {
  const int ret = connection_->io.lock_exclusive(oid, name, cookie, description, nullptr, 0);
  if (ret == -EBUSY || ret == -EEXIST) {
    return Status::Busy(target_.ToString() + " is locked by another writer");
  }
  return ret < 0 ? Error("RADOS lock of", oid, ret) : Status::Ok();
}

Status LibradosImage::Unlock(const std::string& oid, const std::string& name, const std::string& cookie) {
  const int ret = connection_->io.unlock(oid, name, cookie);
  return ret < 0 && ret != -ENOENT ? Error("RADOS unlock of", oid, ret) : Status::Ok();
}

Result<std::vector<RadosImage::Locker>> LibradosImage::Lockers(const std::string& oid,
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

Status LibradosImage::BreakLock(const std::string& oid, const std::string& name, const Locker& locker) {
  const int ret = connection_->io.break_lock(oid, name, locker.client, locker.cookie);
  return ret < 0 && ret != -ENOENT ? Error("RADOS break_lock of", oid, ret) : Status::Ok();
}

Status LibradosImage::Fence(const Locker& locker) {
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
