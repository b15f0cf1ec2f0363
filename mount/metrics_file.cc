// MetricsFile: see metrics_file.h.
#include "metrics_file.h"

#include <spdlog/spdlog.h>

#include "util/replace_file.h"

namespace ckptfs {

Status MetricsFile::Write(bool up) const {
  return ReplaceFile(path_, render_(up), 0644, /*durable=*/false).WithContext("metrics_file");
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
