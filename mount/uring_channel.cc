// UringChannel: see uring_channel.h.
#include "uring_channel.h"

#include <liburing.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "kernel_channel.h"

namespace ckptfs {
namespace {

// The FUSE-over-io_uring wire layout of linux/fuse.h (protocol 7.42,
// kernel 6.14). An entry is two buffers the daemon registers: a header
// block and a payload buffer.
//
// Header block, 288 bytes:
//   in_out[128]       the request's fuse_in_header; the reply's fuse_out_header
//   op_in[128]        the request's per-opcode header (fuse_write_in, ...)
//   ring_ent_in_out   flags u64, commit_id u64 (the request's unique),
//                     payload_sz u32 (bytes in the payload, both ways),
//                     padding u32, reserved u64
// Payload: the request's remaining arguments (a WRITE's data, a name);
// the reply's arguments, all of them (fuse_attr_out, a READ's data).
//
// Commands (IORING_OP_URING_CMD on the /dev/fuse fd, in a 128-byte SQE
// whose command area holds flags u64, commit_id u64, qid u16): REGISTER (1)
// hands the entry's buffers (sqe->addr: an iovec[2]) to queue qid and
// completes when a request is in them; COMMIT_AND_FETCH (2) says the reply
// to request commit_id is in the entry and completes with the next one.
constexpr size_t kInOutBytes = 128;
constexpr size_t kOpInBytes = 128;
struct RingEntryInOut {
  uint64_t flags;
  uint64_t commit_id;
  uint32_t payload_sz;
  uint32_t padding;
  uint64_t reserved;
};
struct RingHeader {
  char in_out[kInOutBytes];
  char op_in[kOpInBytes];
  RingEntryInOut ring_ent_in_out;
};
static_assert(sizeof(RingHeader) == 288);
struct RingCommand {
  uint64_t flags;
  uint64_t commit_id;
  uint16_t qid;
  uint8_t padding[6];
};
constexpr uint32_t kCmdRegister = 1;
constexpr uint32_t kCmdCommitAndFetch = 2;

// Room before the payload for the request's headers, which libfuse's
// parser wants contiguous with its arguments: the worker copies them there,
// so a WRITE's data is parsed where the kernel put it.
constexpr size_t kHeaderRoom = 4096;

// How long a worker waits for a request before it looks at stopping_.
constexpr long long kStopCheckSeconds = 2;

}  // namespace

class UringChannel::Worker {
 public:
  Worker(UringChannel* owner, uint16_t qid, size_t payload_bytes)
      : owner_(owner),
        qid_(qid),
        payload_bytes_(payload_bytes),
        buffer_(new char[kHeaderRoom + payload_bytes]),
        header_(new RingHeader{}) {
    iov_[0] = {header_.get(), sizeof(RingHeader)};
    iov_[1] = {payload(), payload_bytes_};
  }
  ~Worker() {
    if (ring_ready_) io_uring_queue_exit(&ring_);
  }

  void Run();

  // See UringChannel::TakeReply.
  bool TakeReply(const struct iovec* iov, int count);

  // The worker the calling thread is, while it serves a request.
  static thread_local Worker* serving;

 private:
  char* payload() { return buffer_.get() + kHeaderRoom; }
  // Runs the calling thread on its queue's CPU, where the daemon may.
  void PinToQueueCpu();
  Status SetUp();
  // Queues the command `op` for this entry; the wait for the next request
  // submits it.
  Status Queue(uint32_t op, uint64_t commit_id);
  // Parses and serves the request now in the entry; the reply is in the
  // entry when it returns.
  void Serve();
  // Puts a bare reply carrying `error` (a negative errno) in the entry.
  void ReplyError(uint64_t unique, int error);

  // Set at construction; after that everything here is the worker
  // thread's own (Run, and TakeReply from the handlers it runs).
  UringChannel* const owner_;
  const uint16_t qid_;
  const size_t payload_bytes_;
  std::unique_ptr<char[]> buffer_;
  std::unique_ptr<RingHeader> header_;
  struct iovec iov_[2];
  io_uring ring_{};
  bool ring_ready_ = false;
  uint64_t serving_unique_ = 0;
  bool replied_ = false;
};

thread_local UringChannel::Worker* UringChannel::Worker::serving = nullptr;

void UringChannel::Worker::PinToQueueCpu() {
  // The kernel queues a request on the ring of the CPU its caller runs on;
  // served on that CPU, its bytes are still in that CPU's cache and no
  // other CPU is woken for it (4 KiB O_DIRECT writers: 35-40k IOPS pinned,
  // 28-30k not). Not where the daemon may not run there (taskset, cpuset).
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) != 0 || !CPU_ISSET(qid_, &allowed)) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(qid_, &one);
  (void)pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

Status UringChannel::Worker::SetUp() {
  io_uring_params params{};
  // SQE128: the command area. Only this thread submits and reaps, so the
  // kernel may run the ring's work when the thread asks for completions
  // rather than interrupting it.
  params.flags = IORING_SETUP_SQE128 | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  int rc = io_uring_queue_init_params(4, &ring_, &params);
  if (rc == -EINVAL) {
    params = {};
    params.flags = IORING_SETUP_SQE128;
    rc = io_uring_queue_init_params(4, &ring_, &params);
  }
  if (rc < 0) return Status::IOError("io_uring setup for FUSE queue " + std::to_string(qid_), -rc);
  ring_ready_ = true;
  return Status::Ok();
}

Status UringChannel::Worker::Queue(uint32_t op, uint64_t commit_id) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (!sqe) return Status::IOError("no free SQE on a FUSE ring", EBUSY);
  std::memset(sqe, 0, 2 * sizeof(io_uring_sqe));  // an SQE128 slot
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = owner_->fuse_fd_;
  sqe->cmd_op = op;
  sqe->addr = reinterpret_cast<uintptr_t>(iov_);
  sqe->len = 2;
  RingCommand command{};
  command.commit_id = commit_id;
  command.qid = qid_;
  std::memcpy(sqe->cmd, &command, sizeof command);
  return Status::Ok();
}

void UringChannel::Worker::Run() {
  PinToQueueCpu();
  if (Status s = SetUp(); !s.ok()) {
    spdlog::error("FUSE over io_uring: {}", s.ToString());
    owner_->failed_registrations_.fetch_add(1, std::memory_order_release);
    return;
  }
  if (Status s = Queue(kCmdRegister, 0); !s.ok()) {
    spdlog::error("FUSE over io_uring: registering an entry of queue {}: {}", qid_, s.ToString());
    owner_->failed_registrations_.fetch_add(1, std::memory_order_release);
    return;
  }
  bool registered = false;
  while (!owner_->stopping_.load(std::memory_order_acquire)) {
    // One system call sends the queued command (the registration, or the
    // reply with the fetch of the next request) and waits for a request.
    io_uring_cqe* cqe = nullptr;
    __kernel_timespec wait{kStopCheckSeconds, 0};
    const int rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &wait, nullptr);
    if (rc == -ETIME || rc == -EINTR) continue;
    if (rc < 0) {
      spdlog::error("FUSE over io_uring: waiting for a request on queue {}: {}", qid_, std::strerror(-rc));
      return;
    }
    if (cqe == nullptr) continue;
    const int result = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    if (result < 0) {
      // ENOTCONN and ECONNABORTED: the connection is gone (unmount), with
      // this entry served from or never used.
      if (result == -ENOTCONN || result == -ECONNABORTED) return;
      if (!registered) {
        spdlog::error("FUSE over io_uring: the kernel refused an entry of queue {}: {}", qid_,
                      std::strerror(-result));
        owner_->failed_registrations_.fetch_add(1, std::memory_order_release);
      } else {
        spdlog::error("FUSE over io_uring: queue {} failed: {}", qid_, std::strerror(-result));
      }
      return;
    }
    registered = true;
    Serve();
    if (Status s = Queue(kCmdCommitAndFetch, serving_unique_); !s.ok()) {
      spdlog::error("FUSE over io_uring: queue {}: {}", qid_, s.ToString());
      return;
    }
  }
}

void UringChannel::Worker::Serve() {
  fuse_in_header in;
  std::memcpy(&in, header_->in_out, sizeof in);
  RingEntryInOut ent;
  std::memcpy(&ent, &header_->ring_ent_in_out, sizeof ent);
  serving_unique_ = in.unique;
  // The request's length counts its headers and its payload; what is left
  // is the per-opcode header in op_in.
  const size_t payload_bytes = ent.payload_sz;
  if (payload_bytes > payload_bytes_ || in.len < sizeof in + payload_bytes ||
      in.len - sizeof in - payload_bytes > kOpInBytes) {
    spdlog::error("FUSE over io_uring: malformed request (opcode {}, length {}, payload {})", in.opcode,
                  in.len, payload_bytes);
    return ReplyError(in.unique, -EIO);
  }
  const size_t op_bytes = in.len - sizeof in - payload_bytes;
  char* request = payload() - op_bytes - sizeof in;
  std::memcpy(request, &in, sizeof in);
  std::memcpy(request + sizeof in, header_->op_in, op_bytes);
  owner_->inspector_->Inspect(request, in.len);

  fuse_buf buf{};
  buf.size = in.len;
  buf.mem = request;
  serving = this;
  replied_ = false;
  fuse_session_process_buf(owner_->session_, &buf);
  serving = nullptr;
  owner_->requests_.fetch_add(1, std::memory_order_relaxed);
  if (!replied_) {
    // Every request that reaches a ring expects a reply, and the entry
    // returns to the kernel only with one.
    spdlog::error("FUSE over io_uring: opcode {} got no reply", in.opcode);
    ReplyError(in.unique, -EIO);
  }
}

void UringChannel::Worker::ReplyError(uint64_t unique, int error) {
  fuse_out_header out{};
  out.len = sizeof out;
  out.error = error;
  out.unique = unique;
  std::memcpy(header_->in_out, &out, sizeof out);
  header_->ring_ent_in_out.payload_sz = 0;
  replied_ = true;
}

bool UringChannel::Worker::TakeReply(const struct iovec* iov, int count) {
  if (count < 1 || iov[0].iov_len < sizeof(fuse_out_header)) return false;
  fuse_out_header out;
  std::memcpy(&out, iov[0].iov_base, sizeof out);
  // A notification (unique 0) from inside a handler goes to /dev/fuse.
  if (replied_ || out.unique != serving_unique_) return false;
  size_t total = iov[0].iov_len - sizeof out;  // libfuse puts only the header there
  for (int i = 1; i < count; ++i) total += iov[i].iov_len;
  if (total > payload_bytes_) {
    spdlog::error("FUSE over io_uring: a reply of {} bytes does not fit the {} byte payload", total,
                  payload_bytes_);
    ReplyError(out.unique, -EIO);
    return true;
  }
  std::memcpy(header_->in_out, &out, sizeof out);
  char* at = payload();
  auto append = [&at](const void* from, size_t n) {
    if (n == 0) return;
    // memmove: a reply may quote the request it answers.
    std::memmove(at, from, n);
    at += n;
  };
  append(static_cast<const char*>(iov[0].iov_base) + sizeof out, iov[0].iov_len - sizeof out);
  for (int i = 1; i < count; ++i) append(iov[i].iov_base, iov[i].iov_len);
  header_->ring_ent_in_out.payload_sz = static_cast<uint32_t>(total);
  replied_ = true;
  return true;
}

UringChannel::UringChannel(fuse_session* session, int fuse_fd, KernelChannel* inspector,
                           const UringChannelConfig& config)
    : session_(session), fuse_fd_(fuse_fd), inspector_(inspector) {
  for (unsigned q = 0; q < config.queues; ++q) {
    for (unsigned w = 0; w < config.workers_per_queue; ++w) {
      workers_.push_back(std::make_unique<Worker>(this, static_cast<uint16_t>(q), config.payload_bytes));
    }
  }
}

void UringChannel::Start() {
  if (!threads_.empty()) return;
  for (auto& worker : workers_) threads_.emplace_back([w = worker.get()] { w->Run(); });
}

UringChannel::~UringChannel() {
  stopping_.store(true, std::memory_order_release);
  for (std::thread& t : threads_) t.join();
}

bool UringChannel::TakeReply(const struct iovec* iov, int count) {
  Worker* worker = Worker::serving;
  return worker != nullptr && worker->TakeReply(iov, count);
}

Status UringChannel::KernelOffers() {
  constexpr const char* kPath = "/sys/module/fuse/parameters/enable_uring";
  std::ifstream in(kPath);
  std::string value;
  if (!(in >> value)) {
    return Status::NotSupported(std::string("this kernel has no FUSE over io_uring (no ") + kPath +
                                "; it needs 6.14 or later with CONFIG_FUSE_IO_URING)");
  }
  if (value != "Y") {
    return Status::NotSupported(std::string("FUSE over io_uring is off: ") + kPath + " is " + value +
                                " (as root: echo Y > " + kPath + ")");
  }
  return Status::Ok();
}

Result<unsigned> UringChannel::PossibleCpus() {
  constexpr const char* kPath = "/sys/devices/system/cpu/possible";
  std::ifstream in(kPath);
  std::string list;
  if (!(in >> list)) return Status::IOError(std::string("read ") + kPath, errno);
  // A list of ranges: "0-3,8-11" or "0".
  unsigned count = 0;
  size_t at = 0;
  while (at < list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string range = list.substr(at, comma - at);
    const size_t dash = range.find('-');
    try {
      const unsigned first = static_cast<unsigned>(std::stoul(range.substr(0, dash)));
      const unsigned last = dash == std::string::npos ? first : static_cast<unsigned>(std::stoul(range.substr(dash + 1)));
      if (last < first) return Status::Corruption(std::string(kPath) + " says " + list);
      count += last - first + 1;
    } catch (const std::exception&) {
      return Status::Corruption(std::string(kPath) + " says " + list);
    }
    at = comma + 1;
  }
  if (count == 0) return Status::Corruption(std::string(kPath) + " is empty");
  return count;
}

}  // namespace ckptfs
