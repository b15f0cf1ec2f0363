// MetricsFile: see metrics_file.h.
#include "metrics_file.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace ckptfs {

Status MetricsFile::Write(bool up) const {
  const std::string text = render_(up);
  const std::string tmp = path_ + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("metrics_file: create " + tmp, errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::IOError("metrics_file: write " + tmp, err);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::IOError("metrics_file: rename " + tmp + " to " + path_, err);
  }
  return Status::Ok();
}

Status MetricsFile::Start(std::chrono::milliseconds interval) {
  CKPTFS_RETURN_IF_ERROR(Write(true));
  started_ = true;
  rewriter_.Start(interval, [this] {
    // A failure now (the disk full, the directory gone) is logged and
    // tried again at the next interval; the mount goes on.
    if (Status s = Write(true); !s.ok()) spdlog::warn("{}", s.ToString());
  });
  return Status::Ok();
}

void MetricsFile::Finish() {
  if (!started_ || finished_) return;
  finished_ = true;
  rewriter_.Stop();
  if (Status s = Write(false); !s.ok()) spdlog::warn("{}", s.ToString());
}

}  // namespace ckptfs
