// RunPrefetcher: loads stored runs into the data log's run cache on worker
// threads, ahead of a sequential reader (SequentialReads says which), so the
// device's latency overlaps the reader's own requests. For a mount of a
// RADOS image each load is a RADOS read: a reader that had one read in
// flight has the window's runs in flight with it.
//
// A prefetch is a hint: loads that fail are forgotten (the reader loads the
// run itself and sees the error), and runs past the queue's room are
// dropped. A load takes the same path as a read (DataLog::Prefetch: the run
// cache, one load shared with a reader who asks meanwhile, the checksum).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "format/physical_extent.h"
#include "segment/read_pins.h"
#include "util/mutex.h"

namespace ckptfs {

class RunPrefetcher {
 public:
  // Loads one run; true when it read it (false: already in memory, or failed).
  using Load = std::function<bool(const PhysicalExtent&)>;

  // `threads` workers run `load` for each queued run; at most `max_queued`
  // runs wait.
  RunPrefetcher(unsigned threads, size_t max_queued, Load load);
  ~RunPrefetcher() { Stop(); }
  RunPrefetcher(const RunPrefetcher&) = delete;
  RunPrefetcher& operator=(const RunPrefetcher&) = delete;

  // Starts the workers (in the process that serves: a daemon that forks
  // starts the store after the fork).
  void Start() EXCLUDES(mu_);
  // Drops what is queued and waits for the loads in progress. Final.
  void Stop() EXCLUDES(mu_);
  // Queues `runs`; `pin` keeps their segments from being reused until the
  // last of them is loaded (ReadPins).
  void Submit(const std::vector<PhysicalExtent>& runs, std::shared_ptr<ReadPins::Pin> pin)
      EXCLUDES(mu_);

  // Runs read ahead; runs dropped for want of room or after Stop; runs
  // queued or being loaded now.
  uint64_t loaded() const EXCLUDES(mu_);
  uint64_t dropped() const EXCLUDES(mu_);
  uint64_t pending() const EXCLUDES(mu_);

 private:
  struct Job {
    PhysicalExtent run;
    std::shared_ptr<ReadPins::Pin> pin;
  };
  void WorkerLoop() EXCLUDES(mu_);

  const unsigned thread_count_;
  const size_t max_queued_;
  const Load load_;

  mutable Mutex mu_;
  CondVar queued_;  // a job was queued, or Stop
  std::deque<Job> jobs_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t loaded_ GUARDED_BY(mu_) = 0;
  uint64_t loading_ GUARDED_BY(mu_) = 0;  // taken off the queue, not done
  uint64_t dropped_ GUARDED_BY(mu_) = 0;
  std::vector<std::thread> workers_ GUARDED_BY(mu_);
};

}  // namespace ckptfs
