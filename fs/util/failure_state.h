// FailureState: a store's first unrecoverable failure (a commit or a
// compressor's placement that failed). Once set the store takes no more
// changes; later failures are reported to their callers but never replace
// the first, which is the one that explains the rest. Committers, FUSE
// threads and compressor threads all read and set it, holding whatever
// locks they hold, so it has its own lock and owes nothing to theirs.
#pragma once

#include <atomic>

#include "ckptfs/status.h"
#include "util/mutex.h"

namespace ckptfs {

class FailureState {
 public:
  // Records `s` (not OK) unless a failure is recorded already; true when
  // this call recorded it.
  bool Set(const Status& s) {
    MutexLock lock(&mu_);
    if (!first_.ok()) return false;
    first_ = s;
    failed_.store(true, std::memory_order_release);
    return true;
  }
  // The first failure, or OK.
  Status Get() const {
    if (!failed()) return Status::Ok();
    MutexLock lock(&mu_);
    return first_;
  }
  // Cheap enough for every write's check.
  bool failed() const { return failed_.load(std::memory_order_acquire); }

 private:
  mutable Mutex mu_;
  Status first_ GUARDED_BY(mu_);
  std::atomic<bool> failed_{false};
};

}  // namespace ckptfs
