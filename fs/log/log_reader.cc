// LogReader implementation.
#include "log/log_reader.h"

#include <algorithm>
#include <optional>
#include <vector>
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
    std::vector<Record> records;
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
      records.push_back(std::move(*rec));
    }
    // Only a link block may use the segment's last 4 KiB; a writer resuming
    // after any other block there would run past the segment's end.
    if (pos.offset + block_len > sb_.segment_size - kLinkBlockReserve &&
        !(next_segment && records.empty())) {
      return Status::Corruption("log block " + std::to_string(pos.lsn) +
                                " occupies the link reserve of segment " +
                                std::to_string(pos.segment));
    }
    for (const Record& rec : records) {
      ++result.records;
      CKPTFS_RETURN_IF_ERROR(handler(rec));
    }
    ++result.blocks;
    result.bytes += block_len;
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
  CKPTFS_ASSIGN_OR_RETURN(result.damage, ProbeBeyondTail(pos));
  return result;
}

Result<std::string> LogReader::ProbeBeyondTail(const LogPosition& stop) {
  const uint64_t seg_base = sb_.SegmentOffset(stop.segment);
  constexpr uint64_t kChunk = 1 << 20;
  AlignedBuffer chunk(kChunk + kMaxLogBlockSize, /*zero=*/false);
  for (uint64_t off = stop.offset + kBlockSize; off + kBlockSize <= sb_.segment_size;
       off += kChunk) {
    // Read a chunk plus room for a block that starts near its end.
    const uint64_t len = std::min<uint64_t>(kChunk + kMaxLogBlockSize, sb_.segment_size - off);
    CKPTFS_RETURN_IF_ERROR(device_->Read(seg_base + off, chunk.data(), AlignDown(len, kBlockSize)));
    for (uint64_t at = 0; at < std::min<uint64_t>(kChunk, len) && at + kBlockSize <= len;
         at += kBlockSize) {
      const char* b = chunk.data() + at;
      if (DecodeFixed32(b) != kLogBlockMagic || DecodeFixed64(b + 8) != sb_.store_id) continue;
      const uint64_t lsn = DecodeFixed64(b + 16);
      const uint32_t payload_len = DecodeFixed32(b + 28);
      if (lsn <= stop.lsn || kLogBlockHeaderSize + payload_len > len - at) continue;
      if (crc32c::Value(b + 8, kLogBlockHeaderSize - 8 + payload_len) != DecodeFixed32(b + 4)) {
        continue;
      }
      const uint64_t commit_lsn = DecodeFixed64(b + 40);
      if (commit_lsn > stop.lsn) {
        return "metadata log damaged at block " + std::to_string(stop.lsn) + " (" +
               "segment " + std::to_string(stop.segment) + ", offset " +
               std::to_string(stop.offset) + "): block " + std::to_string(lsn) +
               " of a later commit lies beyond it, so changes after the damage are lost";
      }
    }
  }
  return std::string();
}

}  // namespace ckptfs
