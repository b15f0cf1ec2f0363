// SetMountReadAhead implementation.
#include "read_ahead.h"

#include <cerrno>
#include <fstream>

#include "mountinfo.h"

namespace ckptfs {

Status SetMountReadAhead(const std::string& mountpoint, unsigned kilobytes) {
  std::optional<std::string> device = MountDeviceAt(mountpoint);
  if (!device) return Status::NotFound(mountpoint + " is not in mountinfo");
  const std::string knob = "/sys/class/bdi/" + *device + "/read_ahead_kb";
  std::ofstream out(knob);
  out << kilobytes << "\n";
  out.flush();
  if (!out) return Status::IOError("write " + knob, errno ? errno : EACCES);
  return Status::Ok();
}

}  // namespace ckptfs
