// RadosImage: what the tier asks of one image's objects in RADOS. An image
// is a RADOS namespace (the image name) inside a pool, so images never see
// each other's objects and one listing finds all of one.
//
// An interface: LibradosImage (librados_image.h) is the cluster's, and the
// only code that includes librados; the tests' MemoryImage
// (tests/tier/memory_image.h) keeps objects in memory and can fail any call,
// so the drain protocol's cases run without a cluster.
//
// Every call returns a Status; none may hang: a dead OSD or monitor turns
// into an error (ETIMEDOUT) that the caller retries. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ckptfs/status.h"
#include "rados_target.h"
#include "util/mutex.h"

namespace ckptfs {

class RadosImage {
 public:
  // The bytes a read brought, in the memory librados received them into:
  // not copied again. They stay while the Reply lives.
  class Reply {
   public:
    virtual ~Reply() = default;
    virtual const char* data() const = 0;
    virtual size_t size() const = 0;
    // Their CRC32C. librados' messenger checked each frame it received
    // against the frame's checksum and keeps that checksum with the buffer,
    // so for the whole of a reply's bytes, as a read's are, this reads none
    // of them (in msgr2's crc mode, the default; in secure mode it reads
    // them).
    virtual uint32_t Crc32c() const = 0;
  };

  // An asynchronous write or read in flight. Wait() once; the destructor
  // waits too, so the caller's buffer is never used after it is freed.
  class Op {
   public:
    Op() = default;
    virtual ~Op() = default;
    Op(const Op&) = delete;
    Op& operator=(const Op&) = delete;
    // Bytes read (reads) or written.
    virtual Result<size_t> Wait() = 0;
    // The bytes of a read started without a buffer, once Wait succeeded.
    virtual std::unique_ptr<Reply> TakeReply() = 0;
    // Whether the operation has finished (Wait returns at once, but for
    // the CompletionSignal's callback, which follows at once).
    virtual bool Done() const = 0;
  };

  // Memory the caller fills and librados sends from, owned by both: each
  // holds a reference, and the memory goes with the last one. A write's
  // completion does not mean librados has let go of its bytes: one that
  // timed out (ETIMEDOUT) may still sit in the messenger's queue and be
  // sent later, from whatever the buffer holds then. So a caller reuses a
  // buffer only while it is the only holder (!InUse()), and may drop it at
  // any time. Page-aligned, so O_DIRECT reads may fill it and the messenger
  // sends it as it is.
  class SendBuffer {
   public:
    explicit SendBuffer(size_t bytes);
    ~SendBuffer();
    SendBuffer(SendBuffer&&) noexcept;
    SendBuffer& operator=(SendBuffer&&) noexcept;
    char* data();
    size_t size() const;
    // Whether librados (or a Payload not yet handed to it) still holds it.
    bool InUse() const;

   private:
    friend class RadosImage;  // its Payload
    friend class LibradosImage;
    struct Memory;  // librados' buffer
    std::unique_ptr<Memory> memory_;
  };

  // The first bytes of a SendBuffer on their way to an object: not a copy.
  // Its CRC32C, taken here, stays with that buffer, and librados'
  // messenger, which checksums every byte it sends, finds it there instead
  // of reading the bytes a second time: in a drain the two passes were 41%
  // of the daemon's samples, and one pass saved 16-18% of its CPU
  // (docs/tuning.md#send-crc-once).
  class Payload {
   public:
    // Made once the bytes are in place: a checksum the buffer remembers of
    // its earlier contents is forgotten here.
    Payload(SendBuffer* buffer, size_t len);
    ~Payload();
    Payload(Payload&&) noexcept;
    Payload& operator=(Payload&&) noexcept;
    // crc32c::Value of the bytes.
    uint32_t Crc32c() const;
    // The bytes themselves, for an image that copies them (MemoryImage).
    std::string_view bytes() const;

   private:
    friend class LibradosImage;
    struct Bytes;  // librados' bufferlist over the buffer
    std::unique_ptr<Bytes> bytes_;
  };

  // Counts the completions of the operations started with it, so that one
  // thread can go on with whichever of them finishes first: waiting for the
  // oldest of 8 writes to 3 OSDs kept a slot idle whenever a later write
  // finished first. Outlives those operations (each one's Wait returns only
  // once the signal has been told).
  class CompletionSignal {
   public:
    uint64_t completions() const EXCLUDES(mu_);
    // Blocks until more than `seen` operations have completed.
    void WaitBeyond(uint64_t seen) EXCLUDES(mu_);
    // Told by the image once per operation, as it completes.
    void Count() EXCLUDES(mu_);

   private:
    mutable Mutex mu_;
    CondVar changed_;
    uint64_t completions_ GUARDED_BY(mu_) = 0;
  };

  // What a written-once object will be, told to the OSDs with every write
  // of it (RADOS' allocation hint: written front to back, appended to only,
  // never changed, read in order). BlueStore then checksums blocks of
  // `checksum_bytes`, capped at its blob size (bluestore_max_blob_size, 64
  // KiB by default), instead of 4 KiB ones: the OSDs spent 8% less CPU on a
  // drain and 13% less on its restore, and a read of part of the object
  // reads up to a block less 4 KiB more at each end
  // (docs/tuning.md#allocation-hint).
  // rados bench sends the same hint with its writes. Advice only: a retried
  // write, or a drain resumed over a dead writer's object, writes a range
  // again, which costs nothing but the hint's accuracy.
  struct WriteOnceHint {
    uint64_t object_bytes = 0;
    uint64_t checksum_bytes = 0;  // a power of two, 4 KiB or more
  };

  // How a write shows that its object is its writer's: a segment object
  // names its owner in an xattr, as the manifest does (Claim, below), so
  // that a writer whose image was taken over writes nothing into its
  // successor's objects, not even with writes already on their way when it
  // stalled. Each is one operation with the write: the check and the write
  // land together or not at all. A refusal is Exists, and says which.
  struct WriteAs {
    enum class Mode {
      kCreate,    // makes the object, `token` its owner; refused if it exists
      kTakeOver,  // makes `token` the owner; refused unless `from` was (empty: no owner named)
      kOwner,     // refused unless `token` owns the object
    };
    Mode mode;
    std::string_view xattr;
    std::string_view token;
    std::string_view from = {};  // kTakeOver
  };

  struct Locker {
    std::string client;  // e.g. client.4123
    std::string cookie;
    std::string address;
  };

  virtual ~RadosImage() = default;

  virtual const RadosTarget& target() const = 0;
  // This client's name in the cluster (client.4123), one per connection.
  virtual std::string ClientName() const = 0;

  virtual std::unique_ptr<Op> StartWrite(const std::string& oid, Payload payload, uint64_t offset,
                                         const WriteOnceHint& hint, const WriteAs& as,
                                         CompletionSignal* signal = nullptr) = 0;
  // Reads up to `len` bytes into `buf`, or, for a null `buf`, into the
  // image's own memory (Op::TakeReply), where the bytes arrive anyway: a
  // read into the caller's buffer copies each byte again. Past the object's
  // end the count is short. The OSDs are told not to cache what they read
  // for it.
  virtual std::unique_ptr<Op> StartRead(const std::string& oid, char* buf, size_t len, uint64_t offset) = 0;
  std::unique_ptr<Op> StartRead(const std::string& oid, size_t len, uint64_t offset) {
    return StartRead(oid, nullptr, len, offset);
  }
  Result<size_t> Read(const std::string& oid, char* buf, size_t len, uint64_t offset) {
    return StartRead(oid, buf, len, offset)->Wait();
  }
  // The whole object; NotFound when there is none.
  virtual Result<std::string> ReadWhole(const std::string& oid) = 0;
  // Replaces the object's contents at once: readers see the old or the new
  // contents, never a mix (a RADOS write_full is atomic).
  virtual Status WriteWhole(const std::string& oid, const std::string& data) = 0;
  virtual Result<std::vector<std::string>> List() = 0;

  struct OwnedObject {
    std::string oid;
    std::string owner;
  };
  // Removes each object, with up to kBatchWindow of them in flight at
  // once; one Status per object, in their order; no error for one already
  // gone. With `owner_xattr`, an object goes only if that xattr still names
  // its `owner` (empty: it names none), in one operation: Exists if it
  // names another now. The first failure of another kind ends the batch:
  // the objects after it are not tried.
  virtual std::vector<Status> RemoveObjects(const std::vector<OwnedObject>& objects,
                                            const std::string* owner_xattr) = 0;
  std::vector<Status> RemoveIfOwners(const std::vector<OwnedObject>& objects, const std::string& name) {
    return RemoveObjects(objects, &name);
  }
  Status RemoveIfOwner(const std::string& oid, const std::string& name, const std::string& token) {
    return std::move(RemoveIfOwners({{oid, token}}, name).front());
  }
  std::vector<Status> RemoveEach(const std::vector<std::string>& oids) {
    std::vector<OwnedObject> objects;
    objects.reserve(oids.size());
    for (const std::string& oid : oids) objects.push_back({oid, ""});
    return RemoveObjects(objects, nullptr);
  }
  Status Remove(const std::string& oid) { return std::move(RemoveEach({oid}).front()); }

  // Advisory exclusive lock `name` on `oid` held by this client under
  // `cookie`; Busy when someone else holds it.
  virtual Status Lock(const std::string& oid, const std::string& name, const std::string& cookie,
                      const std::string& description) = 0;
  virtual Status Unlock(const std::string& oid, const std::string& name, const std::string& cookie) = 0;
  virtual Result<std::vector<Locker>> Lockers(const std::string& oid, const std::string& name) = 0;
  virtual Status BreakLock(const std::string& oid, const std::string& name, const Locker& locker) = 0;
  // Fences a lock holder off the cluster (`ceph osd blocklist add`, for the
  // cluster's default time, an hour): from then on the OSDs refuse all it
  // sends, so a writer taken for dead cannot write on after its lock is
  // broken. Permission when this client may not blocklist.
  virtual Status Fence(const Locker& locker) = 0;
  // Whether this client has found itself fenced off: blocklisted (every
  // call fails from then on), or no longer the owner of an object it
  // claimed (below).
  virtual bool Fenced() const = 0;

  // An object's owner, the value of its xattr `name`. Claim makes `token`
  // the owner (creating the object, empty, if there is none); the two calls
  // after it succeed only while `token` still is, and otherwise count this
  // client as fenced off (Fenced()). The fence above lasts the cluster's
  // blocklist time and needs a client that may blocklist; a claim lasts
  // until the next one: a writer that takes an image over claims its
  // manifest, so the writer it took it from, should it wake later, publishes
  // nothing over the new writer's images.
  virtual Status Claim(const std::string& oid, const std::string& name, const std::string& token) = 0;
  // WriteWhole, if `token` owns the object; else nothing is written.
  virtual Status WriteWholeIfOwner(const std::string& oid, const std::string& data, const std::string& name,
                                   const std::string& token) = 0;
  // Ok while `token` owns the object.
  virtual Status CheckOwner(const std::string& oid, const std::string& name, const std::string& token) = 0;
  // The owner of each object: its xattr `name`, empty when it names none;
  // NotFound when there is no object. Looked up with up to kBatchWindow in
  // flight; one result per object, in their order; the first failure of
  // another kind ends the batch, as RemoveObjects' does.
  virtual std::vector<Result<std::string>> Owners(const std::vector<std::string>& oids, const std::string& name) = 0;
  Result<std::string> Owner(const std::string& oid, const std::string& name) {
    return std::move(Owners({oid}, name).front());
  }
  // How many calls of one batch (Owners, RemoveObjects) are in flight at
  // most. One at a time, the drain spent two round trips on each object of
  // a deleted checkpoint: over a minute for the 52k objects of a 405B one
  // (docs/tuning.md#gc-batch-window).
  static constexpr size_t kBatchWindow = 64;
};

}  // namespace ckptfs
