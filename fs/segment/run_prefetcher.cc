// RunPrefetcher: see run_prefetcher.h.
#include "segment/run_prefetcher.h"

#include <utility>

namespace ckptfs {

RunPrefetcher::RunPrefetcher(unsigned threads, size_t max_queued, Load load)
    : thread_count_(threads), max_queued_(max_queued), load_(std::move(load)) {}

void RunPrefetcher::Start() {
  MutexLock lock(&mu_);
  if (!workers_.empty() || stopping_) return;
  for (unsigned i = 0; i < thread_count_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

void RunPrefetcher::Stop() {
  std::vector<std::thread> workers;
  std::deque<Job> dropped;  // their pins go after the lock: releasing one takes ReadPins'
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    dropped_ += jobs_.size();
    dropped.swap(jobs_);
    workers.swap(workers_);
  }
  dropped.clear();
  queued_.NotifyAll();
  for (std::thread& t : workers) t.join();
}

void RunPrefetcher::Submit(const std::vector<PhysicalExtent>& runs, std::shared_ptr<ReadPins::Pin> pin) {
  {
    MutexLock lock(&mu_);
    for (const PhysicalExtent& run : runs) {
      if (stopping_ || workers_.empty() || jobs_.size() >= max_queued_) {
        ++dropped_;
        continue;
      }
      jobs_.push_back(Job{run, pin});
    }
  }
  queued_.NotifyAll();
}

void RunPrefetcher::WorkerLoop() {
  MutexLock lock(&mu_);
  while (true) {
    while (jobs_.empty() && !stopping_) queued_.Wait(&mu_);
    if (stopping_) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    ++loading_;
    lock.Unlock();
    const bool loaded = load_(job.run);
    job.pin.reset();  // before the lock: the last pin's release takes ReadPins' lock
    lock.Lock();
    --loading_;
    if (loaded) ++loaded_;
  }
}

uint64_t RunPrefetcher::loaded() const {
  MutexLock lock(&mu_);
  return loaded_;
}

uint64_t RunPrefetcher::pending() const {
  MutexLock lock(&mu_);
  return jobs_.size() + loading_;
}

uint64_t RunPrefetcher::dropped() const {
  MutexLock lock(&mu_);
  return dropped_;
}

}  // namespace ckptfs
