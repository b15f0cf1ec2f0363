// Framing sizes modelled on torch 1.13's zip writer: records are aligned so
// each storage starts on a 64-byte boundary (that is what lets torch.load mmap
// storages), which is why a header write is rarely a round number.
#include "torch_save_layout.h"

namespace ckptfs::replay {
namespace {

constexpr uint64_t kAlignment = 64;
constexpr uint64_t kLocalHeaderBytes = 30;
constexpr uint64_t kDataDescriptorBytes = 16;
constexpr uint64_t kRecordNameBytes = 20;        // "archive/data/NNN" and the like
constexpr uint64_t kMinExtraFieldBytes = 4;      // the padding field's own header
constexpr uint64_t kPickleBaseBytes = 64;
constexpr uint64_t kPicklePerTensorBytes = 48;   // key, storage tuple, shape, stride
constexpr uint64_t kCentralEntryBytes = 46 + kRecordNameBytes + 12;
constexpr uint64_t kEndOfDirectoryBytes = 22 + 56 + 20;  // zip64 end records included
constexpr uint64_t kTrailingRecords = 2;         // "version" and "byteorder"

uint64_t AlignedRecordStart(uint64_t offset) {
  uint64_t header_end = offset + kLocalHeaderBytes + kRecordNameBytes + kMinExtraFieldBytes;
  return (header_end + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

TorchSaveLayout::TorchSaveLayout(const std::vector<uint64_t>& tensor_bytes) {
  uint64_t offset = 0;
  auto add = [&](uint64_t length, bool is_tensor) {
    if (length == 0) return;
    segments_.push_back({offset, length, is_tensor});
    offset += length;
  };
  // Header record and the pickle go out together: Python's buffered writer
  // coalesces them into one write.
  uint64_t pickle_start = AlignedRecordStart(0);
  add(pickle_start + kPickleBaseBytes + kPicklePerTensorBytes * tensor_bytes.size(), false);
  for (uint64_t bytes : tensor_bytes) {
    uint64_t data_start = AlignedRecordStart(offset + kDataDescriptorBytes);
    add(data_start - offset, false);
    add(bytes, true);
  }
  uint64_t records = tensor_bytes.size() + 1 + kTrailingRecords;
  add(kDataDescriptorBytes + kTrailingRecords * (kAlignment + kDataDescriptorBytes) +
          records * kCentralEntryBytes + kEndOfDirectoryBytes,
      false);
}

uint64_t TorchSaveLayout::FileBytes() const {
  if (segments_.empty()) return 0;
  return segments_.back().offset + segments_.back().length;
}

}  // namespace ckptfs::replay
