// PendingRuns implementation.
#include "compress/pending_runs.h"

#include <cstring>

#include "log/record.h"
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
  std::unique_lock<std::mutex> lock(mu_);
  // One run always fits, however small the budget, so writes make progress.
  auto fits = [&] { return held_bytes_ == 0 || held_bytes_ + len <= budget_; };
  if (!fits() && !stopping_) {
    if (!wait) {
      stats_.refused += 1;
      return std::shared_ptr<const PendingRun>();
    }
    stats_.waits += 1;
    changed_.wait(lock, [&] { return stopping_ || fits(); });
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
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(run));
  changed_.notify_all();
}

std::shared_ptr<const PendingRun> PendingRuns::Find(uint64_t address) const {
  const uint64_t id = address & ~PhysicalExtent::kPendingBit;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = runs_.find(id); it != runs_.end()) return it->second;
  if (auto it = failed_.find(id); it != failed_.end()) return it->second;
  return nullptr;
}

std::shared_ptr<const PendingRun> PendingRuns::Take() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
  if (queue_.empty()) return nullptr;
  auto run = std::move(queue_.front());
  queue_.pop_front();
  return run;
}

void PendingRuns::ReleaseLocked(uint64_t id) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  held_bytes_ -= it->second->data.size();
  runs_.erase(it);
  changed_.notify_all();
}

void PendingRuns::Placed(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseLocked(id);
}

void PendingRuns::Failed(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = runs_.find(id); it != runs_.end()) failed_.emplace(id, it->second);
  ReleaseLocked(id);
  stats_.failed_runs += 1;
}

uint64_t PendingRuns::last_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_id_ - 1;
}

void PendingRuns::WaitPlaced(uint64_t id) {
  std::unique_lock<std::mutex> lock(mu_);
  // Ids are handed out in order, so the oldest held run tells.
  changed_.wait(lock, [&] { return runs_.empty() || runs_.begin()->first > id; });
}


void PendingRuns::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  changed_.notify_all();
}

PendingRunStats PendingRuns::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  PendingRunStats s = stats_;
  s.held_bytes = held_bytes_;
  s.held_runs = runs_.size();
  return s;
}

}  // namespace ckptfs
