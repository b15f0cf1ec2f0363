// UringDevice: bounded in-flight chunked writes; short writes and -EAGAIN are
// resubmitted with the offset advanced. Rings are created lazily, after any
// daemon fork, and recycled through a small pool; one a failed write left
// requests in is destroyed instead.
#include "io/uring_device.h"

#include <cerrno>
#include <cstring>
#include <deque>

namespace ckptfs {

UringDevice::UringDevice(std::unique_ptr<FileDevice> file, unsigned queue_depth)
    : file_(std::move(file)), queue_depth_(queue_depth == 0 ? 1 : queue_depth) {}

UringDevice::~UringDevice() {
  MutexLock lock(&pool_mu_);
  for (auto& r : free_rings_) io_uring_queue_exit(&r->ring);
}

std::unique_ptr<UringDevice::Ring> UringDevice::BorrowRing(Status* status) {
  {
    MutexLock lock(&pool_mu_);
    if (!free_rings_.empty()) {
      auto r = std::move(free_rings_.back());
      free_rings_.pop_back();
      return r;
    }
  }
  auto r = std::make_unique<Ring>();
  int rc = io_uring_queue_init(queue_depth_, &r->ring, 0);
  if (rc < 0) {
    *status = Status::IOError("io_uring_queue_init", -rc);
    return nullptr;
  }
  return r;
}

void UringDevice::ReturnRing(std::unique_ptr<Ring> ring, unsigned in_flight) {
  // SQEs prepared but never submitted would go out with the next user's, and
  // completions still to come would be reaped as its own. Exiting the ring
  // drops the first and has the kernel cancel the rest.
  if (in_flight != 0 || io_uring_sq_ready(&ring->ring) != 0 ||
      io_uring_cq_ready(&ring->ring) != 0) {
    io_uring_queue_exit(&ring->ring);
    return;
  }
  MutexLock lock(&pool_mu_);
  free_rings_.push_back(std::move(ring));
}

int UringDevice::Submit(Ring* ring) {
  return calls_.submit ? calls_.submit(&ring->ring) : io_uring_submit(&ring->ring);
}

int UringDevice::WaitCqe(Ring* ring, io_uring_cqe** cqe) {
  return calls_.wait_cqe ? calls_.wait_cqe(&ring->ring, cqe) : io_uring_wait_cqe(&ring->ring, cqe);
}

Status UringDevice::Write(uint64_t offset, const void* buf, size_t len) {
  if (len <= kChunkBytes) return file_->Write(offset, buf, len);
  Status status;
  auto ring = BorrowRing(&status);
  if (!ring) return file_->Write(offset, buf, len);  // no ring: still correct, just slower

  struct Chunk {
    uint64_t offset;
    const char* data;
    size_t len;
  };
  std::deque<Chunk> pending;
  const char* p = static_cast<const char*>(buf);
  for (size_t done = 0; done < len; done += kChunkBytes) {
    pending.push_back({offset + done, p + done, std::min(kChunkBytes, len - done)});
  }
  // In-flight chunks are owned by `inflight`; user_data is the index.
  std::vector<Chunk> inflight(queue_depth_);
  std::vector<unsigned> free_slots;
  for (unsigned i = 0; i < queue_depth_; ++i) free_slots.push_back(i);
  unsigned outstanding = 0;
  while ((!pending.empty() || outstanding > 0) && status.ok()) {
    unsigned queued = 0;
    while (!pending.empty() && !free_slots.empty()) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring->ring);
      if (!sqe) break;
      unsigned slot = free_slots.back();
      free_slots.pop_back();
      inflight[slot] = pending.front();
      pending.pop_front();
      io_uring_prep_write(sqe, file_->fd(), inflight[slot].data,
                          static_cast<unsigned>(inflight[slot].len), inflight[slot].offset);
      io_uring_sqe_set_data64(sqe, slot);
      ++queued;
    }
    // Also SQEs an earlier short submit left behind.
    if (io_uring_sq_ready(&ring->ring) > 0) {
      int rc = Submit(ring.get());
      if (rc < 0) {
        status = Status::IOError("io_uring_submit", -rc);
        break;
      }
      outstanding += static_cast<unsigned>(rc);
      if (outstanding == 0) {  // waiting now would wait forever
        status = Status::IOError("io_uring_submit took no request");
        break;
      }
    }
    io_uring_cqe* cqe = nullptr;
    int rc = WaitCqe(ring.get(), &cqe);
    if (rc < 0) {
      if (rc == -EINTR) continue;
      status = Status::IOError("io_uring_wait_cqe", -rc);
      break;
    }
    // Reap everything that is ready in one pass.
    unsigned head;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring->ring, head, cqe) {
      ++seen;
      unsigned slot = static_cast<unsigned>(io_uring_cqe_get_data64(cqe));
      Chunk c = inflight[slot];
      free_slots.push_back(slot);
      --outstanding;
      if (cqe->res == -EAGAIN || cqe->res == -EINTR) {
        pending.push_front(c);
      } else if (cqe->res < 0) {
        if (status.ok()) {
          status = Status::IOError("write " + file_->path() + " at " + std::to_string(c.offset),
                                   -cqe->res);
        }
      } else if (cqe->res == 0) {
        if (status.ok()) status = Status::IOError("write " + file_->path() + " made no progress");
      } else if (static_cast<size_t>(cqe->res) < c.len) {
        size_t n = static_cast<size_t>(cqe->res);
        pending.push_front({c.offset + n, c.data + n, c.len - n});
      }
    }
    io_uring_cq_advance(&ring->ring, seen);
  }
  // Wait for what the kernel still has: the caller may reuse the buffer once
  // this returns, and the ring's next user must not reap these completions.
  while (outstanding > 0) {
    io_uring_cqe* cqe = nullptr;
    int rc = WaitCqe(ring.get(), &cqe);
    if (rc == -EINTR) continue;
    if (rc < 0) break;  // ReturnRing then destroys the ring instead of pooling it
    io_uring_cqe_seen(&ring->ring, cqe);
    --outstanding;
  }
  ReturnRing(std::move(ring), outstanding);
  return status;
}

}  // namespace ckptfs
