// RadosImage: see rados_image.h. What every implementation shares.
#include "rados_image.h"

namespace ckptfs {

uint64_t RadosImage::CompletionSignal::completions() const {
  MutexLock lock(&mu_);
  return completions_;
}

void RadosImage::CompletionSignal::WaitBeyond(uint64_t seen) {
  MutexLock lock(&mu_);
  while (completions_ <= seen) changed_.Wait(&mu_);
}

void RadosImage::CompletionSignal::Count() {
  MutexLock lock(&mu_);
  completions_ += 1;
  changed_.NotifyAll();
}

}  // namespace ckptfs
