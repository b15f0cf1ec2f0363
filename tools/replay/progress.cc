// Drawn from its own thread so rank threads never block on the terminal.
#include "progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace ckptfs::replay {

ProgressBar::ProgressBar(std::string label, uint64_t total_bytes, bool enabled)
    : label_(std::move(label)), total_(total_bytes), enabled_(enabled) {
  if (!enabled_) return;
  painter_ = std::thread([this] {
    MutexLock lock(&mutex_);
    while (!stopping_) {
      // Woken early (by the destructor, or spuriously): check again first.
      if (!wake_.WaitFor(&mutex_, std::chrono::milliseconds(200)) && !stopping_) Draw(false);
    }
  });
}

ProgressBar::~ProgressBar() {
  if (!enabled_) return;
  {
    MutexLock lock(&mutex_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  painter_.join();
  Draw(true);
}

bool ProgressBar::StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

void ProgressBar::Draw(bool final_draw) {
  constexpr int kWidth = 30;
  uint64_t done = done_.load(std::memory_order_relaxed);
  double fraction = total_ == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
  if (fraction > 1) fraction = 1;
  int filled = static_cast<int>(fraction * kWidth);
  char bar[kWidth + 1];
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '#' : '.';
  bar[kWidth] = '\0';
  std::fprintf(stderr, "\r%-24s [%s] %5.1f%% %9.3f / %.3f GB", label_.c_str(), bar, fraction * 100,
               done / 1e9, total_ / 1e9);
  if (final_draw) std::fputs("\r\033[K", stderr);  // clear: the table follows
  std::fflush(stderr);
}

}  // namespace ckptfs::replay
