// FUSE low-level handlers: argument unpacking, one core call, one reply.
// Exceptions (std::bad_alloc from buffers) stop here and become ENOMEM.
#include "fuse_ops.h"

#include <spdlog/spdlog.h>
#include <sys/xattr.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "ckptfs/filesystem.h"
#include "caller.h"
#include "errno_map.h"
#include "stats_report.h"

namespace ckptfs {
namespace {

FuseContext& Ctx(fuse_req_t req) { return *static_cast<FuseContext*>(fuse_req_userdata(req)); }
FileSystem& Fs(fuse_req_t req) { return *Ctx(req).fs; }

// Counts the request and runs `body`, turning an escaped exception into
// an error reply; a request that takes no reply (forget) gets none.
enum class Reply { kExpected, kNone };
template <typename Body>
void Guard(fuse_req_t req, FuseOp op, Body&& body, Reply reply = Reply::kExpected) {
  Ctx(req).counters.Count(op);
  auto fail = [&](int err) {
    if (reply == Reply::kNone) return fuse_reply_none(req);
    fuse_reply_err(req, err);
  };
  try {
    body();
  } catch (const std::bad_alloc&) {
    fail(ENOMEM);
  } catch (const std::exception& e) {
    spdlog::error("FUSE handler failed: {}", e.what());
    fail(EIO);
  }
}

void ReplyStatus(fuse_req_t req, const Status& s) {
  if (!s.ok()) Ctx(req).counters.CountError();
  fuse_reply_err(req, ToErrno(s));
}

fuse_entry_param EntryOf(fuse_req_t req, const struct stat& st) {
  fuse_entry_param e{};
  e.ino = st.st_ino;
  e.generation = 0;  // inode numbers are never reused, so one generation suffices
  e.attr = st;
  e.attr_timeout = Ctx(req).settings.attr_timeout;
  e.entry_timeout = Ctx(req).settings.entry_timeout;
  return e;
}

void ReplyEntry(fuse_req_t req, const Result<struct stat>& r) {
  if (!r.ok()) return ReplyStatus(req, r.status());
  fuse_entry_param e = EntryOf(req, *r);
  fuse_reply_entry(req, &e);
}

// What a write, truncate, fallocate or chown clears of `ino`'s set-id
// bits, as the kernel's setattr_should_drop_suidgid decides for ext4: `kill`
// says the request must clear them at all; setgid then goes if
// group-executable, or, without group-exec, if the caller is outside the
// file's group. `mode_may_change` says the file has a bit to lose: a
// request whose reply carries no attributes must then tell the kernel.
struct SetIdClearing {
  SetIdDrop drop = SetIdDrop::kNone;
  bool mode_may_change = false;
};
SetIdClearing SetIdClearingFor(fuse_req_t req, fuse_ino_t ino, bool kill) {
  if (!kill) return {};
  auto st = Fs(req).GetAttr(ino);
  const bool has_bits = st.ok() && (st->st_mode & (S_ISUID | S_ISGID));
  if (!st.ok() || !(st->st_mode & S_ISGID) || (st->st_mode & S_IXGRP)) {
    return {SetIdDrop::kSetuidExecSetgid, has_bits};  // group membership cannot matter
  }
  const bool privileged = fuse_req_ctx(req)->uid == 0;
  return {privileged || CallerInGroup(req, st->st_gid) ? SetIdDrop::kSetuidExecSetgid
                                                       : SetIdDrop::kSetuidSetgid,
          has_bits};
}

// Tells the kernel that `ino` changed under a request whose reply says
// nothing of it: its attributes always (the cache would show a cleared
// set-id bit for up to attr_timeout), and with `length` > 0 the cached
// pages of [offset, offset + length). Dropping pages waits for their locks,
// which reads in flight hold until this daemon answers them: only other
// worker threads serve those, so the caller must not hold anything they
// need.
void InvalidateInKernel(fuse_req_t req, fuse_ino_t ino, off_t offset = -1, off_t length = 0) {
  fuse_session* se = Ctx(req).session;
  if (!se) return;
  const int rc = fuse_lowlevel_notify_inval_inode(se, ino, offset, length);
  // ENOENT: the kernel holds no inode for it, so nothing to drop.
  if (rc != 0 && rc != -ENOENT) {
    spdlog::warn("invalidating inode {} in the kernel: {}", ino, std::strerror(-rc));
  }
}

// fi->fh of an open file is its OpenHandle, all the state a handle needs
// here: whether it reads and writes through the page cache, chosen per
// open by the PageCacheTracker, and whether it may write.
OpenHandle HandleOf(const fuse_file_info* fi) { return OpenHandle::Decode(fi->fh); }

void NoteOpened(fuse_req_t req, fuse_ino_t ino, uint64_t size, fuse_file_info* fi) {
  // Without FUSE_DIRECT_IO_ALLOW_MMAP the kernel refuses shared mmap of
  // a direct-I/O file (numpy, safetensors map files that way).
  const DirectReads policy =
      Ctx(req).channel.DirectIoMmap() ? Ctx(req).settings.direct_reads : DirectReads::kNever;
  const OpenHandle handle = Ctx(req).page_cache.Open(ino, fi->flags, size, policy);
  fi->fh = handle.Encode();
  fi->direct_io = handle.mode == OpenHandle::Mode::kDirectIo;
}

// A read the daemon sees (an open for reading, a directory opened to list)
// moves atime as the mount's policy says; the reply carries no attributes,
// so the kernel is told. O_NOATIME opens move nothing, as on any filesystem.
void NoteAccess(fuse_req_t req, fuse_ino_t ino, int open_flags) {
  if ((open_flags & O_ACCMODE) == O_WRONLY || (open_flags & O_NOATIME)) return;
  auto moved = Fs(req).NoteAccess(ino);
  if (moved.ok() && *moved) InvalidateInKernel(req, ino);
}

void Init(void* userdata, fuse_conn_info* conn) {
  auto* ctx = static_cast<FuseContext*>(userdata);
  const FuseSettings& s = ctx->settings;
  if (s.writeback_cache && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) {
    conn->want |= FUSE_CAP_WRITEBACK_CACHE;
  }
  if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
  // libfuse turns on atomic O_TRUNC, which moves the truncation into the
  // OPEN request; without it the kernel sends it as a setattr of size 0,
  // the one path that truncates (and logs the truncation) in the core.
  conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
  if (conn->capable & FUSE_CAP_ASYNC_DIO) conn->want |= FUSE_CAP_ASYNC_DIO;
  // File handles (open_by_handle_at, NFS export) name an inode by its
  // number, which a store never reuses (so one generation serves); the
  // kernel asks for one it has forgotten with a LOOKUP of "." in it.
  if (conn->capable & FUSE_CAP_EXPORT_SUPPORT) conn->want |= FUSE_CAP_EXPORT_SUPPORT;
  conn->max_write = s.max_write;
  conn->max_readahead = s.max_write;
  conn->max_background = s.max_background;
  conn->congestion_threshold = s.max_background * 3 / 4;
}

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guard(req, FuseOp::kLookup, [&] {
    auto r = Fs(req).Lookup(parent, name);
    if (!r.ok() && r.status().IsNotFound()) {
      // A negative entry with a timeout lets the kernel cache the miss.
      fuse_entry_param e{};
      e.entry_timeout = Ctx(req).settings.entry_timeout;
      fuse_reply_entry(req, &e);
      return;
    }
    ReplyEntry(req, r);
  });
}

void Forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  Guard(
      req, FuseOp::kForget,
      [&] {
        Fs(req).Forget(ino, nlookup);
        Ctx(req).page_cache.Evicted(ino);
        fuse_reply_none(req);
      },
      Reply::kNone);
}

void ForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  Guard(
      req, FuseOp::kBatchForget,
      [&] {
        for (size_t i = 0; i < count; ++i) {
          Fs(req).Forget(forgets[i].ino, forgets[i].nlookup);
          Ctx(req).page_cache.Evicted(forgets[i].ino);
        }
        fuse_reply_none(req);
      },
      Reply::kNone);
}

void GetAttr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  Guard(req, FuseOp::kGetAttr, [&] {
    auto r = Fs(req).GetAttr(ino);
    if (!r.ok()) return ReplyStatus(req, r.status());
    fuse_reply_attr(req, &*r, Ctx(req).settings.attr_timeout);
  });
}

void SetAttr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info*) {
  Guard(req, FuseOp::kSetAttr, [&] {
    AttrChange c;
    c.set_mode = to_set & FUSE_SET_ATTR_MODE;
    c.set_uid = to_set & FUSE_SET_ATTR_UID;
    c.set_gid = to_set & FUSE_SET_ATTR_GID;
    c.set_size = to_set & FUSE_SET_ATTR_SIZE;
    c.set_atime = to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW);
    c.set_mtime = to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW);
    c.set_ctime = to_set & FUSE_SET_ATTR_CTIME;
    c.atime_now = to_set & FUSE_SET_ATTR_ATIME_NOW;
    c.mtime_now = to_set & FUSE_SET_ATTR_MTIME_NOW;
    c.mode = attr->st_mode;
    c.uid = attr->st_uid;
    c.gid = attr->st_gid;
    c.size = static_cast<uint64_t>(attr->st_size);
    c.atime = attr->st_atim;
    c.mtime = attr->st_mtim;
    c.ctime = attr->st_ctim;
    // A truncate clears set-id bits when the kernel says the caller lacks
    // CAP_FSETID; a chown always does, whoever the caller (as on ext4).
    const bool chown = c.set_uid || c.set_gid;
    c.drop_setid =
        SetIdClearingFor(req, ino, chown || (c.set_size && KernelChannel::ServingRequestKillsSetId()))
            .drop;
    auto r = Fs(req).SetAttr(ino, c);
    if (!r.ok()) return ReplyStatus(req, r.status());
    fuse_reply_attr(req, &*r, Ctx(req).settings.attr_timeout);
  });
}

void ReadLink(fuse_req_t req, fuse_ino_t ino) {
  Guard(req, FuseOp::kReadLink, [&] {
    auto r = Fs(req).ReadLink(ino);
    if (!r.ok()) return ReplyStatus(req, r.status());
    fuse_reply_readlink(req, r->c_str());
  });
}

void Mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  Guard(req, FuseOp::kMknod, [&] {
    // Device nodes are stored like any inode; whether they open devices is
    // the mount's nodev (libfuse's default), the kernel's to enforce.
    const fuse_ctx* who = fuse_req_ctx(req);
    ReplyEntry(req, Fs(req).Mknod(parent, name, mode, rdev, who->uid, who->gid));
  });
}

void Mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  Guard(req, FuseOp::kMkdir, [&] {
    const fuse_ctx* who = fuse_req_ctx(req);
    ReplyEntry(req, Fs(req).Mkdir(parent, name, mode, who->uid, who->gid));
  });
}

void Unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guard(req, FuseOp::kUnlink, [&] { ReplyStatus(req, Fs(req).Unlink(parent, name)); });
}

void Rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guard(req, FuseOp::kRmdir, [&] { ReplyStatus(req, Fs(req).Rmdir(parent, name)); });
}

void Symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  Guard(req, FuseOp::kSymlink, [&] {
    const fuse_ctx* who = fuse_req_ctx(req);
    ReplyEntry(req, Fs(req).Symlink(parent, name, target, who->uid, who->gid));
  });
}

void Rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent,
            const char* new_name, unsigned int flags) {
  Guard(req, FuseOp::kRename, [&] { ReplyStatus(req, Fs(req).Rename(parent, name, new_parent, new_name, flags)); });
}

void Link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name) {
  Guard(req, FuseOp::kLink, [&] { ReplyEntry(req, Fs(req).Link(ino, new_parent, new_name)); });
}

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guard(req, FuseOp::kOpen, [&] {
    Status s = Fs(req).OpenFile(ino, fi->flags);
    if (!s.ok()) return ReplyStatus(req, s);
    auto st = Fs(req).GetAttr(ino);
    if (!st.ok()) return ReplyStatus(req, st.status());
    // Only this mount changes the store, so cached pages stay valid.
    fi->keep_cache = 1;
    NoteOpened(req, ino, static_cast<uint64_t>(st->st_size), fi);
    NoteAccess(req, ino, fi->flags);
    if (fuse_reply_open(req, fi) != 0) Ctx(req).page_cache.Released(ino, HandleOf(fi));
  });
}

void Create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  Guard(req, FuseOp::kCreate, [&] {
    const fuse_ctx* who = fuse_req_ctx(req);
    auto r = Fs(req).Create(parent, name, mode, who->uid, who->gid);
    if (!r.ok()) return ReplyStatus(req, r.status());
    Status s = Fs(req).OpenFile(r->st_ino, fi->flags);
    if (!s.ok()) return ReplyStatus(req, s);
    fi->keep_cache = 1;
    NoteOpened(req, r->st_ino, 0, fi);
    fuse_entry_param e = EntryOf(req, *r);
    if (fuse_reply_create(req, &e, fi) != 0) Ctx(req).page_cache.Released(r->st_ino, HandleOf(fi));
  });
}

// One write to /dev/fuse takes at most IOV_MAX (1024) buffers, and libfuse
// spends one on the reply's header. A read of more pieces than the rest (a
// file written 512 bytes at a time is 2048 runs a MiB) would fail that
// write, and the kernel would wait for the reply for ever: such a reply is
// copied into one buffer instead.
constexpr size_t kMaxReplySlices = IOV_MAX - 1;

void Read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Guard(req, FuseOp::kRead, [&] {
    if (HandleOf(fi).mode == OpenHandle::Mode::kODirect && !(fi->flags & O_DIRECT)) {
      Ctx(req).page_cache.ReadThroughCache(ino);
    }
    // The bytes go to the kernel straight from the buffers that hold them
    // (the verified run, the segment in memory): the kernel's copy is the
    // only one.
    ReadView view;
    Status s = Fs(req).ReadInto(ino, static_cast<uint64_t>(off), size, &view);
    if (!s.ok()) return ReplyStatus(req, s);
    if (view.slices().empty()) return (void)fuse_reply_buf(req, nullptr, 0);
    if (view.slices().size() > kMaxReplySlices) {
      std::unique_ptr<char[]> joined(new char[view.size()]);
      view.CopyTo(joined.get());
      return (void)fuse_reply_buf(req, joined.get(), view.size());
    }
    fuse_reply_iov(req, view.slices().data(), static_cast<int>(view.slices().size()));
  });
}

void Write(fuse_req_t req, fuse_ino_t ino, const char* data, size_t size, off_t off,
           fuse_file_info* fi) {
  Guard(req, FuseOp::kWrite, [&] {
    Ctx(req).counters.CountWrite(size);
    // The kernel flags a write whose caller lacks CAP_FSETID; writes of its
    // cache (writeback) never carry the flag, and a file with set-id bits
    // is written through, so the writer's own write carries it.
    const SetIdClearing clearing = SetIdClearingFor(req, ino, KernelChannel::ServingRequestKillsSetId());
    auto r = Fs(req).Write(ino, static_cast<uint64_t>(off), data, size, clearing.drop);
    if (!r.ok()) return ReplyStatus(req, r.status());
    // A write that bypassed the page cache (O_DIRECT, or a direct-I/O
    // open) leaves whatever pages of the range the kernel cached before it
    // stale: an asynchronous O_DIRECT write invalidates them only before
    // it is sent, so buffered readers meanwhile fill them with the old
    // bytes (generic/451). Dropped now that the new bytes are readable, and
    // before the reply completes the write, no read after it sees old ones.
    const bool bypassed_cache =
        !fi->writepage &&
        ((fi->flags & O_DIRECT) || HandleOf(fi).mode == OpenHandle::Mode::kDirectIo);
    if (bypassed_cache && *r > 0 && Ctx(req).page_cache.TakeInvalidation(ino)) {
      InvalidateInKernel(req, ino, off, static_cast<off_t>(*r));
    } else if (clearing.mode_may_change) {
      InvalidateInKernel(req, ino);
    }
    fuse_reply_write(req, *r);
  });
}

void Flush(fuse_req_t req, fuse_ino_t, fuse_file_info*) {
  Ctx(req).counters.Count(FuseOp::kFlush);
  // close() is not a durability point and the daemon holds no POSIX locks,
  // so a FLUSH has nothing to do. ENOSYS makes the kernel stop sending it
  // (a round trip per close saved); it still writes the file's dirty pages
  // back at close and returns their errors, before it would have asked.
  fuse_reply_err(req, ENOSYS);
}

void Release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guard(req, FuseOp::kRelease, [&] {
    Fs(req).ReleaseFile(ino);
    Ctx(req).page_cache.Released(ino, HandleOf(fi));
    fuse_reply_err(req, 0);
  });
}

void Fsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) {
  Guard(req, FuseOp::kFsync, [&] { ReplyStatus(req, Fs(req).Sync()); });
}

void OpenDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guard(req, FuseOp::kOpenDir, [&] {
    auto r = Fs(req).GetAttr(ino);
    if (!r.ok()) return ReplyStatus(req, r.status());
    if (!S_ISDIR(r->st_mode)) return (void)fuse_reply_err(req, ENOTDIR);
    NoteAccess(req, ino, fi->flags);
    fuse_reply_open(req, fi);
  });
}

void DoReadDir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus) {
  Guard(req, plus ? FuseOp::kReadDirPlus : FuseOp::kReadDir, [&] {
    std::unique_ptr<char[]> buf(new char[size]);
    size_t used = 0;
    auto fill = [&](std::string_view name, const struct stat& st, uint64_t next) {
      std::string n(name);
      size_t room = size - used;
      size_t need;
      if (plus) {
        fuse_entry_param e = EntryOf(req, st);
        // "." and ".." carry no kernel reference.
        if (n == "." || n == "..") {
          e.ino = 0;
          e.attr_timeout = e.entry_timeout = 0;
        }
        need = fuse_add_direntry_plus(req, buf.get() + used, room, n.c_str(), &e,
                                      static_cast<off_t>(next));
      } else {
        need = fuse_add_direntry(req, buf.get() + used, room, n.c_str(), &st,
                                 static_cast<off_t>(next));
      }
      if (need > room) return false;
      used += need;
      return true;
    };
    Status s = Fs(req).ReadDir(ino, static_cast<uint64_t>(off), plus, fill);
    if (!s.ok()) return ReplyStatus(req, s);
    fuse_reply_buf(req, buf.get(), used);
  });
}

void ReadDir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  DoReadDir(req, ino, size, off, false);
}

void ReadDirPlus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  DoReadDir(req, ino, size, off, true);
}

void ReleaseDir(fuse_req_t req, fuse_ino_t, fuse_file_info*) {
  Ctx(req).counters.Count(FuseOp::kReleaseDir);
  fuse_reply_err(req, 0);
}

void FsyncDir(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) {
  Guard(req, FuseOp::kFsyncDir, [&] { ReplyStatus(req, Fs(req).Sync()); });
}

void StatFs(fuse_req_t req, fuse_ino_t) {
  Guard(req, FuseOp::kStatFs, [&] {
    struct statvfs sv = Fs(req).StatFs();
    fuse_reply_statfs(req, &sv);
  });
}

// POSIX ACLs are not supported (no FUSE_CAP_POSIX_ACL): refusing their
// xattrs makes cp -p, tar and rsync fall back to chmod instead of storing
// an opaque ACL that would leave the mode bits wrong.
bool IsAclXattr(const char* name) {
  return std::strcmp(name, "system.posix_acl_access") == 0 ||
         std::strcmp(name, "system.posix_acl_default") == 0;
}

// The root's stats xattrs are computed, never stored.
bool IsStatsXattr(fuse_ino_t ino, const char* name) {
  return ino == FUSE_ROOT_ID && (std::strcmp(name, kStatsXattr) == 0 || std::strcmp(name, kStatsJsonXattr) == 0 ||
                                 std::strcmp(name, kStatsPrometheusXattr) == 0);
}

void SetXattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
              int flags) {
  Guard(req, FuseOp::kSetXattr, [&] {
    if (IsStatsXattr(ino, name)) return (void)fuse_reply_err(req, EPERM);
    if (IsAclXattr(name)) return (void)fuse_reply_err(req, EOPNOTSUPP);
    ReplyStatus(req, Fs(req).SetXattr(ino, name, std::string_view(value, size), flags));
  });
}

// getxattr and listxattr share the size protocol: 0 asks for the length.
void ReplySized(fuse_req_t req, const Result<std::string>& r, size_t size) {
  if (!r.ok()) return ReplyStatus(req, r.status());
  if (size == 0) return (void)fuse_reply_xattr(req, r->size());
  if (size < r->size()) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, r->data(), r->size());
}

void GetXattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  Guard(req, FuseOp::kGetXattr, [&] {
    if (IsStatsXattr(ino, name)) {
      const StatsFormat format = std::strcmp(name, kStatsJsonXattr) == 0         ? StatsFormat::kJson
                                 : std::strcmp(name, kStatsPrometheusXattr) == 0 ? StatsFormat::kPrometheus
                                                                                 : StatsFormat::kText;
      return ReplySized(req, RenderStats(Ctx(req), format), size);
    }
    if (IsAclXattr(name)) return (void)fuse_reply_err(req, EOPNOTSUPP);
    ReplySized(req, Fs(req).GetXattr(ino, name), size);
  });
}

void ListXattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  Guard(req, FuseOp::kListXattr, [&] { ReplySized(req, Fs(req).ListXattr(ino), size); });
}

void RemoveXattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  Guard(req, FuseOp::kRemoveXattr, [&] { ReplyStatus(req, Fs(req).RemoveXattr(ino, name)); });
}

void Fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
               fuse_file_info*) {
  Guard(req, FuseOp::kFallocate, [&] {
    // Like a write, a fallocate clears set-id bits unless the caller holds
    // CAP_FSETID (generic/683-685), but its request does not say which.
    const SetIdClearing clearing = SetIdClearingFor(req, ino, !CallerHasCapFsetid(req));
    Status s = Fs(req).Fallocate(ino, mode, static_cast<uint64_t>(offset),
                                 static_cast<uint64_t>(length), clearing.drop);
    if (s.ok() && clearing.mode_may_change) InvalidateInKernel(req, ino);
    ReplyStatus(req, s);
  });
}

// A copy within the mount shares the source's stored runs (no data is
// written). The kernel has written back both ranges' dirty pages before
// sending it and drops the destination's cached pages after the reply.
void CopyFileRange(fuse_req_t req, fuse_ino_t in, off_t in_offset, fuse_file_info*,
                   fuse_ino_t out, off_t out_offset, fuse_file_info*, size_t length, int flags) {
  Guard(req, FuseOp::kCopyFileRange, [&] {
    if (flags != 0) return ReplyStatus(req, Status::Invalid("copy_file_range flags"));
    // Like a write: the destination's set-id bits go unless the caller
    // holds CAP_FSETID.
    const SetIdClearing clearing = SetIdClearingFor(req, out, !CallerHasCapFsetid(req));
    auto r = Fs(req).CopyRange(in, static_cast<uint64_t>(in_offset), out,
                               static_cast<uint64_t>(out_offset), length, clearing.drop);
    if (!r.ok()) return ReplyStatus(req, r.status());
    if (clearing.mode_may_change) InvalidateInKernel(req, out);
    fuse_reply_write(req, *r);
  });
}

}  // namespace

std::string RenderStats(FuseContext& ctx, StatsFormat format, bool up) {
  const StoreStats stats = ctx.fs->Stats();
  std::optional<DrainStats> tier;
  if (ctx.tier_stats) tier = ctx.tier_stats();
  const ChannelStatus channel{ctx.channel.ChannelName(), ctx.channel.RingRequests()};
  switch (format) {
    case StatsFormat::kJson:
      return RenderStatsJson(stats, ctx.counters, channel, tier);
    case StatsFormat::kPrometheus:
      return RenderStatsPrometheus(stats, ctx.counters, channel, tier, ctx.metric_labels, up);
    case StatsFormat::kText:
      break;
  }
  return RenderStatsText(stats, ctx.counters, channel, tier);
}

fuse_lowlevel_ops MakeFuseOperations() {
  fuse_lowlevel_ops ops{};
  ops.init = Init;
  ops.lookup = Lookup;
  ops.forget = Forget;
  ops.forget_multi = ForgetMulti;
  ops.getattr = GetAttr;
  ops.setattr = SetAttr;
  ops.readlink = ReadLink;
  ops.mknod = Mknod;
  ops.mkdir = Mkdir;
  ops.unlink = Unlink;
  ops.rmdir = Rmdir;
  ops.symlink = Symlink;
  ops.rename = Rename;
  ops.link = Link;
  ops.open = Open;
  ops.create = Create;
  ops.read = Read;
  ops.write = Write;
  ops.flush = Flush;
  ops.release = Release;
  ops.fsync = Fsync;
  ops.opendir = OpenDir;
  ops.readdir = ReadDir;
  ops.readdirplus = ReadDirPlus;
  ops.releasedir = ReleaseDir;
  ops.fsyncdir = FsyncDir;
  ops.statfs = StatFs;
  ops.setxattr = SetXattr;
  ops.getxattr = GetXattr;
  ops.listxattr = ListXattr;
  ops.removexattr = RemoveXattr;
  ops.fallocate = Fallocate;
  ops.copy_file_range = CopyFileRange;
  return ops;
}

}  // namespace ckptfs
