// KernelChannel: the daemon's own reads and writes of /dev/fuse, installed
// as libfuse's custom I/O. It exists for what libfuse 3.14 cannot do:
//
// - Negotiate FUSE_HANDLE_KILLPRIV_V2. Without it the kernel never sets
//   SB_NOSEC on the mount and asks the daemon for security.capability
//   before every write(2) (file_remove_privs): a round trip per write that
//   capped small buffered writes and O_DIRECT at a third of ext4. The
//   channel adds the flag to the INIT reply when the kernel offered it; the
//   daemon then clears set-id bits itself (SetIdDrop).
// - Negotiate FUSE_DIRECT_IO_ALLOW_MMAP (kernel 6.6+, an INIT flags2 bit
//   libfuse 3.14 does not know). Without it a file opened for direct I/O
//   cannot be mapped shared, so a mount may give its files direct reads
//   only when the channel got it (DirectIoMmap).
// - Pass on the kernel's "kill suid/sgid" flags of WRITE and SETATTR
//   requests, which libfuse 3.14 drops. The kernel sets them only for a
//   caller without CAP_FSETID, which only it can tell.
//
// - Speak FUSE over io_uring (UringChannel) where the kernel offers it and
//   the mount asks for it (-o uring): FUSE_OVER_IO_URING in the INIT
//   reply, then the ring's workers start, and replies to the requests
//   they serve go back through the ring.
//
// libfuse reads a request and serves it in the same worker thread, so the
// flags of the request a thread read are kept per thread
// (ServingRequestKillsSetId) for the handler that serves it; a ring worker
// does the same.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <memory>

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "ckptfs/status.h"

namespace ckptfs {

class UringChannel;

// -o uring: auto uses FUSE over io_uring where the kernel offers it, on
// requires it, off keeps /dev/fuse.
enum class UringMode { kAuto, kOn, kOff };

class KernelChannel {
 public:
  explicit KernelChannel(UringMode uring = UringMode::kOff);
  ~KernelChannel();
  KernelChannel(const KernelChannel&) = delete;
  KernelChannel& operator=(const KernelChannel&) = delete;

  // Routes the mounted session's /dev/fuse I/O through the channel of its
  // userdata (a FuseContext). Call after fuse_session_mount and before the
  // loop.
  static Status Install(fuse_session* se);

  // Whether the kernel asked to clear set-id bits with the request the
  // calling worker thread is serving (a WRITE or SETATTR from a caller
  // without CAP_FSETID). Only meaningful inside a request handler.
  static bool ServingRequestKillsSetId();

  // Whether the kernel lets files opened for direct I/O be mapped shared
  // (through the page cache). Known once INIT is answered, before any open.
  bool DirectIoMmap() const { return direct_io_mmap_.load(std::memory_order_acquire); }

  // Stops the ring's workers (after the unmount, before the session goes).
  void StopRing();

  // "io_uring" once the ring's entries are registered, else "dev_fuse".
  const char* ChannelName() const;
  // Requests served through the ring (0 on /dev/fuse).
  uint64_t RingRequests() const;

  // Notes what the request in `buf` tells the channel (INIT, kill flags);
  // for the handler the calling thread runs next.
  void Inspect(const char* buf, size_t len);

 private:
  static ssize_t Read(int fd, void* buf, size_t len, void* userdata);
  static ssize_t Writev(int fd, struct iovec* iov, int count, void* userdata);

  // Adds the flags above that the kernel offered to the INIT reply in
  // `iov`, if it is one; true if it asked for the ring.
  bool AmendInitReply(struct iovec* iov, int count);
  // Starts the ring's workers on the session's channel `fd`, once the
  // kernel has the INIT reply that asked for it.
  void StartRing(fuse_session* se, int fd);
  // Whether to ask for the ring: the mount wants it and the kernel offers
  // it (logs the choice either way).
  bool WantRing() const;
  // The ring's payload size the INIT reply implies.
  static size_t RingPayloadBytes(uint32_t flags, const char* reply, size_t reply_len);

  // The INIT request's unique id, 0 until it arrives; the kernel sends
  // INIT once per connection, before any other request.
  std::atomic<uint64_t> init_unique_{0};
  std::atomic<bool> kernel_offers_killpriv_v2_{false};
  std::atomic<bool> kernel_offers_direct_io_mmap_{false};
  std::atomic<bool> direct_io_mmap_{false};  // negotiated
  const UringMode uring_mode_;
  std::atomic<bool> kernel_offers_uring_{false};
  // What the INIT reply promised the ring: its largest request or reply.
  size_t ring_payload_bytes_ = 0;
  // Made by the thread that wrote the INIT reply, once; read by any.
  std::unique_ptr<UringChannel> ring_owner_;
  std::atomic<UringChannel*> ring_{nullptr};
};

}  // namespace ckptfs
