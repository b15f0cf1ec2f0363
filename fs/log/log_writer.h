// LogWriter: appends batches of encoded records to the metadata log as
// checksummed, chained blocks (format in format/log_format.h).
//
// Not thread-safe: the metadata log's committer is its only caller.
#pragma once

#include <functional>
#include <string_view>

#include "ckptfs/status.h"
#include "format/superblock.h"
#include "io/block_device.h"
#include "log/log_position.h"

namespace ckptfs {

class LogWriter {
 public:
  // Hands out a fresh metadata segment when the current one is full.
  using SegmentAllocator = std::function<Result<uint32_t>()>;

  // `device` must outlive the writer. Writing resumes at `position`.
  LogWriter(BlockDevice* device, const Superblock& sb, LogPosition position,
            SegmentAllocator allocate);
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Writes `records` (concatenated EncodeRecord output) as one or more
  // blocks and returns once they are written, not yet flushed. The caller
  // flushes the device. After a failure the writer refuses further writes,
  // since the log tail on the device is then unknown.
  Status Append(std::string_view records);

  const LogPosition& position() const { return position_; }
  // Bytes of blocks this writer has written.
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  // Builds one block holding `payload` at the current position into `out`.
  void BuildBlock(std::string_view payload, char* out, size_t block_len);
  Status WriteBlocks(std::string_view records);

  BlockDevice* const device_;
  const Superblock sb_;
  LogPosition position_;
  SegmentAllocator allocate_;
  uint64_t commit_lsn_ = 0;  // first lsn of the Append in progress
  uint64_t bytes_written_ = 0;
  Status failed_;
};

// Size in bytes of the record at the front of `records`, or 0 if truncated.
size_t FrontRecordSize(std::string_view records);

}  // namespace ckptfs
