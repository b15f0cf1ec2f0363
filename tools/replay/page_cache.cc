// Dirty pages cannot be dropped, hence the sync() first.
#include "page_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace ckptfs::replay {

Status DropPageCache() {
  ::sync();
  int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("open /proc/sys/vm/drop_caches", errno);
  ssize_t n = ::write(fd, "3\n", 2);
  int err = errno;
  ::close(fd);
  if (n != 2) return Status::IOError("write /proc/sys/vm/drop_caches", n < 0 ? err : EIO);
  return Status::Ok();
}

}  // namespace ckptfs::replay
