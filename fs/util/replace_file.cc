// ReplaceFile: see replace_file.h.
#include "util/replace_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace ckptfs {

Status ReplaceFile(const std::string& path, std::string_view data, mode_t mode, bool durable) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Status::IOError("create " + tmp, errno);
  const auto fail = [&](const std::string& what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return Status::IOError(what, err);
  };
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write " + tmp);
    done += static_cast<size_t>(n);
  }
  if (durable && ::fsync(fd) != 0) return fail("sync " + tmp);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::IOError("rename " + tmp + " to " + path, err);
  }
  return Status::Ok();
}

}  // namespace ckptfs
