// MetricsFile: the mount's Prometheus metrics in a file the daemon rewrites
// every few seconds (-o metrics_file=PATH), for node_exporter's textfile
// collector. Each version is written beside the file and renamed over it,
// so a reader sees a whole one; the last, written at exit, says
// ckptfs_up 0 with the final figures.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "ckptfs/status.h"
#include "util/periodic_thread.h"

namespace ckptfs {

class MetricsFile {
 public:
  // `render(up)`: the metrics text.
  MetricsFile(std::string path, std::function<std::string(bool up)> render)
      : path_(std::move(path)), render_(std::move(render)) {}
  ~MetricsFile() { Finish(); }
  MetricsFile(const MetricsFile&) = delete;
  MetricsFile& operator=(const MetricsFile&) = delete;

  // Writes the file once now (the mount refuses to start on an error: a
  // path that cannot be written), then every `interval`.
  Status Start(std::chrono::milliseconds interval);
  // Stops the rewrites and writes the last version (ckptfs_up 0). Once.
  void Finish();

  // Writes the file whole: PATH.tmp, then renamed over PATH.
  Status Write(bool up) const;

 private:
  const std::string path_;
  const std::function<std::string(bool)> render_;
  PeriodicThread rewriter_;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace ckptfs
