// The torch.save write model: contiguous records, one write per tensor, each
// tensor starting 64-byte aligned as torch's zip writer arranges.
#include <gtest/gtest.h>

#include "torch_save_layout.h"

namespace ckptfs::replay {
namespace {

TEST(TorchSaveLayout, OneAlignedWritePerTensorBetweenFramingRecords) {
  std::vector<uint64_t> tensors = {131072, 1024, 65536, 7};
  TorchSaveLayout layout(tensors);
  uint64_t expected_offset = 0;
  std::vector<uint64_t> tensor_writes;
  for (const WriteSegment& segment : layout.segments()) {
    EXPECT_EQ(segment.offset, expected_offset);
    expected_offset += segment.length;
    if (segment.is_tensor) {
      EXPECT_EQ(segment.offset % 64, 0u);
      tensor_writes.push_back(segment.length);
    }
  }
  EXPECT_EQ(tensor_writes, tensors);
  EXPECT_EQ(layout.FileBytes(), expected_offset);
  // header, then (preamble, tensor) per tensor, then the central directory
  EXPECT_EQ(layout.segments().size(), 1 + 2 * tensors.size() + 1);
  EXPECT_FALSE(layout.segments().front().is_tensor);
  EXPECT_FALSE(layout.segments().back().is_tensor);
}

TEST(TorchSaveLayout, FramingIsSmallNextToTensors) {
  TorchSaveLayout layout({1ull << 30});
  EXPECT_LT(layout.FileBytes() - (1ull << 30), 4096u);
}

}  // namespace
}  // namespace ckptfs::replay
