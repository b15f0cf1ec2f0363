// LogWriter: packs records into blocks without splitting a record, writes the
// blocks for one segment in a single device write, and chains to a new
// segment through a link block when the current one cannot take the next.
#include "log/log_writer.h"

#include <cstring>

#include "format/log_format.h"
#include "log/record.h"
#include "util/aligned_buffer.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace ckptfs {

size_t FrontRecordSize(std::string_view records) {
  if (records.size() < 5) return 0;
  size_t n = 5 + DecodeFixed32(records.data() + 1);
  return n <= records.size() ? n : 0;
}

LogWriter::LogWriter(BlockDevice* device, const Superblock& sb, LogPosition position,
                     SegmentAllocator allocate)
    : device_(device), sb_(sb), position_(position), allocate_(std::move(allocate)) {}

void LogWriter::BuildBlock(std::string_view payload, char* out, size_t block_len) {
  std::memset(out, 0, block_len);
  EncodeFixed32(out, kLogBlockMagic);
  EncodeFixed64(out + 8, sb_.store_id);
  EncodeFixed64(out + 16, position_.lsn);
  EncodeFixed32(out + 24, position_.prev_crc);
  EncodeFixed32(out + 28, static_cast<uint32_t>(payload.size()));
  EncodeFixed32(out + 32, static_cast<uint32_t>(block_len));
  EncodeFixed64(out + 40, commit_lsn_);
  std::memcpy(out + kLogBlockHeaderSize, payload.data(), payload.size());
  uint32_t crc = crc32c::Value(out + 8, kLogBlockHeaderSize - 8 + payload.size());
  EncodeFixed32(out + 4, crc);
  position_.lsn += 1;
  position_.prev_crc = crc;
}

Status LogWriter::Append(std::string_view records) {
  if (!failed_.ok()) return failed_;
  Status s = WriteBlocks(records);
  if (!s.ok()) failed_ = s;
  return s;
}

Status LogWriter::WriteBlocks(std::string_view records) {
  commit_lsn_ = position_.lsn;
  const size_t max_payload = kMaxLogBlockSize - kLogBlockHeaderSize;
  // Blocks are staged per segment and written with one device write.
  std::string staged;
  uint64_t staged_start = position_.offset;
  auto flush_staged = [&]() -> Status {
    if (staged.empty()) return Status::Ok();
    AlignedBuffer buf(staged.size());
    std::memcpy(buf.data(), staged.data(), staged.size());
    Status s = device_->Write(sb_.SegmentOffset(position_.segment) + staged_start, buf.data(),
                              staged.size());
    bytes_written_ += staged.size();
    staged.clear();
    return s;
  };

  while (!records.empty()) {
    // Take as many whole records as fit into one block.
    size_t take = 0;
    while (take < records.size()) {
      size_t n = FrontRecordSize(records.substr(take));
      if (n == 0) return Status::Invalid("LogWriter given a truncated record");
      if (take + n > max_payload && take > 0) break;
      if (n > max_payload) return Status::Invalid("log record larger than a block");
      take += n;
    }
    size_t block_len = AlignUp(kLogBlockHeaderSize + take, kBlockSize);
    if (position_.offset + block_len + kLinkBlockReserve > sb_.segment_size) {
      // Chain: a link block naming the next segment ends this one.
      CKPTFS_ASSIGN_OR_RETURN(uint32_t next, allocate_());
      std::string link;
      EncodeRecord(record::NextSegment{next}, &link);
      size_t link_off = staged.size();
      staged.resize(staged.size() + kBlockSize);
      BuildBlock(link, staged.data() + link_off, kBlockSize);
      CKPTFS_RETURN_IF_ERROR(flush_staged());
      position_.segment = next;
      position_.offset = 0;
      staged_start = 0;
    }
    size_t off = staged.size();
    staged.resize(staged.size() + block_len);
    BuildBlock(records.substr(0, take), staged.data() + off, block_len);
    position_.offset += block_len;
    records.remove_prefix(take);
  }
  return flush_staged();
}

}  // namespace ckptfs
