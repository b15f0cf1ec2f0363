// TorchSaveLayout: the sequence of writes torch.save issues for a dict of tensors.
//
// torch.save produces a zip archive: a record holding the pickled object, then
// one record per tensor storage (a small 64-byte-aligned local header followed
// by the raw storage), then the central directory. Observed under strace
// (tests/replay/data/torch_save_2ranks.strace), that is one small write per record
// header and one write per storage. We reproduce the sizes, not the zip bytes.
#pragma once

#include <cstdint>
#include <vector>

namespace ckptfs::replay {

struct WriteSegment {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool is_tensor = false;  // false: zip/pickle framing
};

class TorchSaveLayout {
 public:
  explicit TorchSaveLayout(const std::vector<uint64_t>& tensor_bytes);

  const std::vector<WriteSegment>& segments() const { return segments_; }
  uint64_t FileBytes() const;

 private:
  std::vector<WriteSegment> segments_;
};

}  // namespace ckptfs::replay
