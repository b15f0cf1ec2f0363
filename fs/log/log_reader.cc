// LogReader implementation.
#include "log/log_reader.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "format/log_format.h"
#include "util/aligned_buffer.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace ckptfs {

Result<LogReplayResult> LogReader::Replay(const RecordHandler& handler) {
  LogReplayResult result;
  LogPosition pos{sb_.log_head_segment, 0, sb_.log_head_lsn, sb_.log_head_prev_crc};
  result.segments.push_back(pos.segment);
  AlignedBuffer buf(kMaxLogBlockSize);

  for (;;) {
    if (pos.offset + kBlockSize > sb_.segment_size) {
      result.stop_reason = "end of segment without a link block";
      break;
    }
    const uint64_t base = sb_.SegmentOffset(pos.segment) + pos.offset;
    CKPTFS_RETURN_IF_ERROR(device_->Read(base, buf.data(), kBlockSize));
    const char* b = buf.data();
    if (DecodeFixed32(b) != kLogBlockMagic || DecodeFixed64(b + 8) != sb_.store_id ||
        DecodeFixed64(b + 16) != pos.lsn || DecodeFixed32(b + 24) != pos.prev_crc) {
      result.stop_reason = "no block with lsn " + std::to_string(pos.lsn);
      break;
    }
    uint32_t payload_len = DecodeFixed32(b + 28);
    uint32_t block_len = DecodeFixed32(b + 32);
    if (block_len % kBlockSize || block_len > kMaxLogBlockSize ||
        kLogBlockHeaderSize + payload_len > block_len ||
        pos.offset + block_len > sb_.segment_size) {
      result.stop_reason = "block " + std::to_string(pos.lsn) + " has impossible lengths";
      break;
    }
    if (block_len > kBlockSize) {
      CKPTFS_RETURN_IF_ERROR(device_->Read(base + kBlockSize, buf.data() + kBlockSize,
                                           block_len - kBlockSize));
    }
    uint32_t crc = crc32c::Value(b + 8, kLogBlockHeaderSize - 8 + payload_len);
    if (crc != DecodeFixed32(b + 4)) {
      result.stop_reason = "block " + std::to_string(pos.lsn) + " checksum mismatch (torn write)";
      break;
    }

    std::string_view payload(b + kLogBlockHeaderSize, payload_len);
    std::optional<uint32_t> next_segment;
    while (!payload.empty()) {
      auto rec = DecodeRecord(&payload);
      // The block's checksum held, so a bad record is a writer bug or a
      // deliberate forgery: refuse the whole store rather than guess.
      if (!rec.ok()) return rec.status().WithContext("log block " + std::to_string(pos.lsn));
      if (auto* link = std::get_if<record::NextSegment>(&*rec)) {
        if (link->segment >= sb_.segment_count) {
          return Status::Corruption("log links to segment " + std::to_string(link->segment) +
                                    " beyond the store");
        }
        next_segment = link->segment;
        continue;
      }
      ++result.records;
      CKPTFS_RETURN_IF_ERROR(handler(*rec));
    }
    ++result.blocks;
    pos.lsn += 1;
    pos.prev_crc = crc;
    if (next_segment) {
      if (std::find(result.segments.begin(), result.segments.end(), *next_segment) !=
          result.segments.end()) {
        return Status::Corruption("log chain loops back to segment " +
                                  std::to_string(*next_segment));
      }
      pos.segment = *next_segment;
      pos.offset = 0;
      result.segments.push_back(pos.segment);
    } else {
      pos.offset += block_len;
    }
  }
  result.end = pos;
  return result;
}

}  // namespace ckptfs
