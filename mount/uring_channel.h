// UringChannel: FUSE over io_uring (kernel 6.14 and later, when the fuse
// module's enable_uring is on). Requests reach the daemon as completions of
// io_uring commands on /dev/fuse instead of read(2)s, and a reply goes back
// in the same command that fetches the next request: one system call per
// request where /dev/fuse takes two, and no wakeup of a reader thread.
//
// The kernel keeps one queue per possible CPU and hands a request to the
// queue of the CPU its caller runs on. Each queue gets a few workers; each
// worker owns an io_uring and one ring entry (a header and a payload
// buffer) registered with the kernel, and serves the requests that land in
// it on its own thread, through libfuse's request parser and the same
// handlers as the /dev/fuse loop. With one entry per worker, a worker
// blocked in a handler (an fsync waiting for its commit) holds no entry the
// kernel could fill: the queue's other workers take the next requests.
//
// Replies are written by the handlers through libfuse, which calls
// KernelChannel::Writev; that hands a reply to the ring (TakeReply) when
// the calling thread is a worker serving that request. FORGET, INTERRUPT
// and the daemon's notifications stay on /dev/fuse, as the protocol has
// them.
//
// The wire layout (linux/fuse.h of 6.14; Debian 12's headers predate it) is
// defined in uring_channel.cc.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "ckptfs/status.h"

namespace ckptfs {

class KernelChannel;

struct UringChannelConfig {
  unsigned queues = 1;             // the kernel's: one per possible CPU
  unsigned workers_per_queue = 1;  // ring entries (and threads) per queue
  size_t payload_bytes = 1 << 20;  // at least the largest request or reply
};

class UringChannel {
 public:
  // The workers, not started yet. `inspector` sees each request before it
  // is served (KernelChannel::Inspect).
  UringChannel(fuse_session* session, int fuse_fd, KernelChannel* inspector,
               const UringChannelConfig& config);
  // Starts the workers, which register their entries with the kernel. The
  // session must have answered INIT with FUSE_OVER_IO_URING. Once.
  void Start();
  // Stops and joins the workers. The kernel ends their commands when the
  // connection goes (unmount); a worker also stops within two seconds of
  // being asked.
  ~UringChannel();
  UringChannel(const UringChannel&) = delete;
  UringChannel& operator=(const UringChannel&) = delete;

  // Takes the reply in `iov` if the calling thread is a worker serving the
  // request it answers; false sends it to /dev/fuse. Called for every
  // reply the daemon writes.
  static bool TakeReply(const struct iovec* iov, int count);

  // Requests served through the ring so far.
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }
  // Whether every worker registered its entry (false once one failed; the
  // kernel then keeps using /dev/fuse).
  bool registered() const { return failed_registrations_.load(std::memory_order_acquire) == 0; }

  // Ok if the kernel offers FUSE over io_uring to new mounts (the fuse
  // module's enable_uring is Y); else says why not.
  static Status KernelOffers();

  // The kernel's queue count: the possible CPUs
  // (/sys/devices/system/cpu/possible), every one of which must register
  // before the kernel uses the ring.
  static Result<unsigned> PossibleCpus();

 private:
  class Worker;

  fuse_session* const session_;
  const int fuse_fd_;
  KernelChannel* const inspector_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> requests_{0};
  std::atomic<unsigned> failed_registrations_{0};
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
};

}  // namespace ckptfs
