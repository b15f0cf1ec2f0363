// KernelChannel: see kernel_channel.h. The request and reply layouts are
// the kernel's (linux/fuse.h); fields are copied out with memcpy since a
// request buffer carries no alignment promise past its header.
#include "kernel_channel.h"

#include <linux/fuse.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "fuse_ops.h"
#include "uring_channel.h"

namespace ckptfs {
namespace {

// Set by the worker thread's read of a request, read by the handler the
// same thread runs for it (see the header).
thread_local bool t_request_kills_setid = false;

KernelChannel& ChannelOf(void* session_userdata) {
  return static_cast<FuseContext*>(session_userdata)->channel;
}

// FUSE_DIRECT_IO_ALLOW_MMAP of linux/fuse.h since 6.6 (Debian 12's headers
// are 6.1's): bit 36 of the INIT flags, so bit 4 of flags2.
constexpr uint32_t kDirectIoAllowMmapFlags2 = 1u << (36 - 32);
// FUSE_OVER_IO_URING (7.42, kernel 6.14): bit 41, so bit 9 of flags2. The
// kernel offers it only while the fuse module's enable_uring is on.
constexpr uint32_t kOverIoUringFlags2 = 1u << (41 - 32);

// Ring workers per queue: enough that fsyncs blocked in their handlers
// leave workers for the queue's other requests, few enough that a node with
// many CPUs does not hold a thread and a payload buffer per CPU eightfold.
unsigned RingWorkersPerQueue(unsigned queues) { return std::clamp(16u / std::max(queues, 1u), 2u, 8u); }

// Reads the u32 at `offset` of a request's argument, if it is that long.
bool ArgWord(const char* arg, size_t arg_len, size_t offset, uint32_t* value) {
  if (arg_len < offset + sizeof(uint32_t)) return false;
  std::memcpy(value, arg + offset, sizeof(uint32_t));
  return true;
}

}  // namespace

KernelChannel::KernelChannel(UringMode uring) : uring_mode_(uring) {}

KernelChannel::~KernelChannel() = default;

void KernelChannel::StopRing() {
  ring_.store(nullptr, std::memory_order_release);
  ring_owner_.reset();
}

const char* KernelChannel::ChannelName() const {
  const UringChannel* ring = ring_.load(std::memory_order_acquire);
  return ring != nullptr && ring->registered() ? "io_uring" : "dev_fuse";
}

uint64_t KernelChannel::RingRequests() const {
  const UringChannel* ring = ring_.load(std::memory_order_acquire);
  return ring == nullptr ? 0 : ring->requests();
}

Status KernelChannel::Install(fuse_session* se) {
  fuse_custom_io io{};
  io.read = Read;
  io.writev = Writev;
  // No splice hooks: libfuse then neither splices nor offers to, and every
  // request passes through Read.
  const int rc = fuse_session_custom_io(se, &io, fuse_session_fd(se));
  if (rc != 0) return Status::IOError("taking over the /dev/fuse channel", -rc);
  return Status::Ok();
}

bool KernelChannel::ServingRequestKillsSetId() { return t_request_kills_setid; }

ssize_t KernelChannel::Read(int fd, void* buf, size_t len, void* userdata) {
  const ssize_t n = ::read(fd, buf, len);
  // libfuse reads errno after a failed read; Inspect runs only on success.
  if (n > 0) ChannelOf(userdata).Inspect(static_cast<const char*>(buf), static_cast<size_t>(n));
  return n;
}

ssize_t KernelChannel::Writev(int fd, struct iovec* iov, int count, void* userdata) {
  if (UringChannel::TakeReply(iov, count)) {
    ssize_t total = 0;
    for (int i = 0; i < count; ++i) total += static_cast<ssize_t>(iov[i].iov_len);
    return total;
  }
  KernelChannel& channel = ChannelOf(userdata);
  const bool start_ring = channel.AmendInitReply(iov, count);
  const ssize_t n = ::writev(fd, iov, count);
  // The kernel takes ring registrations only once it has the INIT reply.
  if (start_ring && n >= 0) channel.StartRing(static_cast<FuseContext*>(userdata)->session, fd);
  return n;
}

void KernelChannel::StartRing(fuse_session* se, int fd) {
  auto queues = UringChannel::PossibleCpus();
  if (!queues.ok()) {
    // The INIT reply asked for the ring, and the kernel holds every
    // request until each queue has an entry: a mount that cannot serve it
    // cannot serve at all.
    spdlog::critical("FUSE over io_uring: {}; stopping", queues.status().ToString());
    fuse_session_exit(se);
    return;
  }
  UringChannelConfig config;
  config.queues = *queues;
  config.workers_per_queue = RingWorkersPerQueue(*queues);
  config.payload_bytes = ring_payload_bytes_;
  ring_owner_ = std::make_unique<UringChannel>(se, fd, this, config);
  // Published before a worker can serve anything: the first request the
  // kernel lets through (it holds them until every queue has registered)
  // may be a stats read that asks which channel serves it.
  ring_.store(ring_owner_.get(), std::memory_order_release);
  ring_owner_->Start();
  spdlog::info("channel: FUSE over io_uring, {} queues of {} workers, {} KiB payloads", config.queues,
               config.workers_per_queue, config.payload_bytes / 1024);
}

void KernelChannel::Inspect(const char* buf, size_t len) {
  t_request_kills_setid = false;
  if (len < sizeof(fuse_in_header)) return;
  fuse_in_header header;
  std::memcpy(&header, buf, sizeof header);
  const char* arg = buf + sizeof header;
  const size_t arg_len = len - sizeof header;
  uint32_t word = 0;
  switch (header.opcode) {
    case FUSE_INIT:
      if (ArgWord(arg, arg_len, offsetof(fuse_init_in, flags), &word)) {
        kernel_offers_killpriv_v2_.store((word & FUSE_HANDLE_KILLPRIV_V2) != 0,
                                         std::memory_order_relaxed);
        uint32_t flags2 = 0;
        const bool extended = (word & FUSE_INIT_EXT) != 0 &&
                              ArgWord(arg, arg_len, offsetof(fuse_init_in, flags2), &flags2);
        kernel_offers_direct_io_mmap_.store(extended && (flags2 & kDirectIoAllowMmapFlags2) != 0,
                                            std::memory_order_relaxed);
        kernel_offers_uring_.store(extended && (flags2 & kOverIoUringFlags2) != 0, std::memory_order_relaxed);
      }
      init_unique_.store(header.unique, std::memory_order_release);
      break;
    case FUSE_WRITE:
      if (ArgWord(arg, arg_len, offsetof(fuse_write_in, write_flags), &word)) {
        t_request_kills_setid = (word & FUSE_WRITE_KILL_SUIDGID) != 0;
      }
      break;
    case FUSE_SETATTR:
      if (ArgWord(arg, arg_len, offsetof(fuse_setattr_in, valid), &word)) {
        t_request_kills_setid = (word & FATTR_KILL_SUIDGID) != 0;
      }
      break;
    default:
      break;
  }
}

bool KernelChannel::AmendInitReply(struct iovec* iov, int count) {
  const uint64_t init = init_unique_.load(std::memory_order_acquire);
  if (init == 0 || count < 2 || iov[0].iov_len < sizeof(fuse_out_header)) return false;
  fuse_out_header out;
  std::memcpy(&out, iov[0].iov_base, sizeof out);
  if (out.unique != init) return false;
  init_unique_.store(0, std::memory_order_relaxed);  // one INIT per connection
  if (out.error != 0) return false;
  constexpr size_t kFlags = offsetof(fuse_init_out, flags);
  constexpr size_t kFlags2 = offsetof(fuse_init_out, flags2);
  if (iov[1].iov_len < kFlags + sizeof(uint32_t)) return false;
  char* reply = static_cast<char*>(iov[1].iov_base);
  // A reply to a kernel older than protocol 7.23 is shorter: no flags2.
  const bool has_flags2 = iov[1].iov_len >= kFlags2 + sizeof(uint32_t);
  uint32_t flags = 0, flags2 = 0;
  std::memcpy(&flags, reply + kFlags, sizeof flags);
  if (has_flags2) std::memcpy(&flags2, reply + kFlags2, sizeof flags2);
  if (kernel_offers_killpriv_v2_.load(std::memory_order_relaxed)) {
    flags |= FUSE_HANDLE_KILLPRIV_V2;
    spdlog::info("negotiated FUSE_HANDLE_KILLPRIV_V2: the daemon clears set-id bits");
  } else {
    spdlog::warn("the kernel does not offer FUSE_HANDLE_KILLPRIV_V2: every write(2) will cost "
                 "a security.capability lookup");
  }
  // flags2 counts only in a reply that says FUSE_INIT_EXT, which libfuse
  // sets when the kernel did.
  if (has_flags2 && kernel_offers_direct_io_mmap_.load(std::memory_order_relaxed) &&
      (flags & FUSE_INIT_EXT) != 0) {
    flags2 |= kDirectIoAllowMmapFlags2;
    direct_io_mmap_.store(true, std::memory_order_release);
  }
  const bool ring = has_flags2 && (flags & FUSE_INIT_EXT) != 0 && WantRing();
  if (ring) {
    flags2 |= kOverIoUringFlags2;
    ring_payload_bytes_ = RingPayloadBytes(flags, reply, iov[1].iov_len);
  }
  if (has_flags2) std::memcpy(reply + kFlags2, &flags2, sizeof flags2);
  std::memcpy(reply + kFlags, &flags, sizeof flags);
  return ring;
}

bool KernelChannel::WantRing() const {
  if (uring_mode_ == UringMode::kOff) return false;
  if (kernel_offers_uring_.load(std::memory_order_relaxed)) return true;
  if (uring_mode_ == UringMode::kOn) {
    spdlog::critical("-o uring=on: the kernel does not offer FUSE over io_uring "
                     "(/sys/module/fuse/parameters/enable_uring must be Y, kernel 6.14 or later)");
  } else {
    spdlog::info("channel: /dev/fuse (the kernel does not offer FUSE over io_uring)");
  }
  return false;
}

size_t KernelChannel::RingPayloadBytes(uint32_t flags, const char* reply, size_t reply_len) {
  // The kernel refuses an entry whose payload is smaller than the largest
  // request it may send: max_write, or max_pages pages.
  uint32_t max_write = 0;
  uint16_t max_pages = 0;
  if (reply_len >= offsetof(fuse_init_out, max_write) + sizeof max_write) {
    std::memcpy(&max_write, reply + offsetof(fuse_init_out, max_write), sizeof max_write);
  }
  if ((flags & FUSE_MAX_PAGES) != 0 && reply_len >= offsetof(fuse_init_out, max_pages) + sizeof max_pages) {
    std::memcpy(&max_pages, reply + offsetof(fuse_init_out, max_pages), sizeof max_pages);
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // 32 pages when FUSE_MAX_PAGES is not negotiated (FUSE_DEFAULT_MAX_PAGES_PER_REQ).
  const size_t pages = max_pages != 0 ? max_pages : 32;
  return std::max<size_t>({8192, max_write, pages * page});
}

}  // namespace ckptfs
