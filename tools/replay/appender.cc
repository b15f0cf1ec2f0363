// Appender: see appender.h.
#include "appender.h"

#include <fcntl.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "file_io.h"

namespace ckptfs::replay {

Appender::Appender(std::string path, uint64_t bytes_per_s)
    : path_(std::move(path)), bytes_per_s_(bytes_per_s), thread_([this] { Run(); }) {}

Appender::~Appender() { (void)Stop(); }

Status Appender::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  return error_;
}

void Appender::Run() {
  constexpr auto kTick = std::chrono::milliseconds(100);
  constexpr int kTicksPerFsync = 10;
  const uint64_t per_tick = std::max<uint64_t>(1, bytes_per_s_ / 10);
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    error_ = Status::IOError("open " + path_, errno);
    return;
  }
  UniqueFd owned(fd);
  std::vector<std::byte> record(per_tick);
  auto next = std::chrono::steady_clock::now();
  for (uint64_t tick = 0;; ++tick) {
    // A line of text per record, like a logger's, numbered so the file's
    // content is not all alike.
    const std::string line = "step " + std::to_string(tick) + " loss 0.1234 lr 3e-4\n";
    for (size_t i = 0; i < record.size(); ++i) record[i] = static_cast<std::byte>(line[i % line.size()]);
    Status s = WriteAll(fd, record, path_);
    if (s.ok() && tick % kTicksPerFsync == kTicksPerFsync - 1) s = Fsync(fd, path_);
    if (!s.ok()) {
      error_ = s;
      return;
    }
    bytes_.fetch_add(record.size());
    next += kTick;
    if (WaitUntilStopping(next)) break;
  }
  error_ = Fsync(fd, path_);
  if (error_.ok()) error_ = owned.Close(path_);
}

bool Appender::WaitUntilStopping(std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(&mu_);
  while (!stopping_) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    wake_.WaitFor(&mu_, deadline - now);
  }
  return true;
}

}  // namespace ckptfs::replay
