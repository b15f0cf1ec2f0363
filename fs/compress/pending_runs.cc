// PendingRuns implementation.
#include "compress/pending_runs.h"

#include <cstring>

#include "format/physical_extent.h"
#include "util/clock.h"

namespace ckptfs {

uint64_t PendingRun::address() const { return PhysicalExtent::kPendingBit | id; }

Result<std::shared_ptr<const PendingRun>> PendingRuns::Add(uint64_t ino, uint64_t offset,
                                                           const CompressionPolicy& policy,
                                                           const char* data, size_t len,
                                                           bool wait) {
  auto run = std::make_shared<PendingRun>();
  run->ino = ino;
  run->offset = offset;
  run->time_ns = NowNs();
  run->policy = policy;
  run->data.assign(data, data + len);  // copied before waiting: no lock held
  MutexLock lock(&mu_);
  if (!FitsLocked(len) && !stopping_) {
    if (!wait) {
      stats_.refused += 1;
      return std::shared_ptr<const PendingRun>();
    }
    stats_.waits += 1;
    while (!stopping_ && !FitsLocked(len)) changed_.Wait(&mu_);
  }
  if (stopping_) return Status::IOError("the store is closing");
  run->id = next_id_++;
  held_bytes_ += len;
  stats_.runs += 1;
  stats_.bytes += len;
  runs_.emplace(run->id, run);
  return std::shared_ptr<const PendingRun>(std::move(run));
}

void PendingRuns::Queue(std::shared_ptr<const PendingRun> run) {
  MutexLock lock(&mu_);
  queue_.push_back(std::move(run));
  changed_.NotifyAll();
}

std::shared_ptr<const PendingRun> PendingRuns::Find(uint64_t address) const {
  const uint64_t id = address & ~PhysicalExtent::kPendingBit;
  MutexLock lock(&mu_);
  if (auto it = runs_.find(id); it != runs_.end()) return it->second;
  if (auto it = failed_.find(id); it != failed_.end()) return it->second;
  return nullptr;
}

std::shared_ptr<const PendingRun> PendingRuns::Take() {
  MutexLock lock(&mu_);
  while (!stopping_ && queue_.empty()) changed_.Wait(&mu_);
  if (queue_.empty()) return nullptr;
  auto run = std::move(queue_.front());
  queue_.pop_front();
  return run;
}

bool PendingRuns::FitsLocked(size_t len) const {
  // One run always fits, however small the budget, so writes make progress.
  return held_bytes_ == 0 || held_bytes_ + len <= budget_;
}

void PendingRuns::ReleaseLocked(uint64_t id) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  held_bytes_ -= it->second->data.size();
  runs_.erase(it);
  changed_.NotifyAll();
}

void PendingRuns::Placed(uint64_t id) {
  MutexLock lock(&mu_);
  ReleaseLocked(id);
}

void PendingRuns::Failed(uint64_t id) {
  MutexLock lock(&mu_);
  if (auto it = runs_.find(id); it != runs_.end()) failed_.emplace(id, it->second);
  ReleaseLocked(id);
  stats_.failed_runs += 1;
}

uint64_t PendingRuns::last_id() const {
  MutexLock lock(&mu_);
  return next_id_ - 1;
}

void PendingRuns::WaitPlaced(uint64_t id) {
  MutexLock lock(&mu_);
  // Ids are handed out in order, so the oldest held run tells.
  while (!runs_.empty() && runs_.begin()->first <= id) changed_.Wait(&mu_);
}


void PendingRuns::Stop() {
  MutexLock lock(&mu_);
  stopping_ = true;
  changed_.NotifyAll();
}

PendingRunStats PendingRuns::stats() const {
  MutexLock lock(&mu_);
  PendingRunStats s = stats_;
  s.held_bytes = held_bytes_;
  s.held_runs = runs_.size();
  return s;
}

}  // namespace ckptfs
