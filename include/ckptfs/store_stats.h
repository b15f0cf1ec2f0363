// StoreStats: the store's counters since mount and its state now, as the
// daemon reports them (ckptfs-stat, the root's stats xattrs, Prometheus).
// Cheap to take: no I/O, brief locks only.
#pragma once

#include <cstdint>

#include "ckptfs/stat_field.h"

// Every figure once: X(type, name, kind, what it counts). The order is the
// reports'.
#define CKPTFS_STORE_STATS(X) \
  X(uint64_t, store_id, kGauge, "the store's id, from its superblock: its RADOS images carry it") \
  X(uint64_t, bytes_written, kCounter, "bytes users wrote") \
  X(uint64_t, bytes_read, kCounter, "bytes users read") \
  X(uint64_t, read_errors, kCounter, "reads refused, such as for a checksum mismatch") \
  X(uint64_t, stored_runs_written, kCounter, "stored runs written: coalesced extents appended to segments") \
  X(uint64_t, data_device_bytes, kCounter, "segment bytes written to the device") \
  X(uint64_t, metadata_device_bytes, kCounter, "log bytes written to the device") \
  X(uint64_t, segments_written, kCounter, "segments written") \
  X(uint64_t, partial_flushes, kCounter, "open segments written early for an fsync") \
  X(uint64_t, buffer_waits, kCounter, "appends that waited for the memory budget") \
  X(uint64_t, read_cache_hits, kCounter, "reads served from the run cache") \
  X(uint64_t, read_cache_misses, kCounter, "reads the run cache could not serve") \
  X(uint64_t, prefetched_runs, kCounter, "runs read ahead of sequential readers") \
  X(uint64_t, prefetch_pending, kGauge, "runs waiting to be read ahead, or being read, now") \
  X(uint64_t, commits, kCounter, "commits of the metadata log") \
  X(uint64_t, log_compactions, kCounter, "compactions of the metadata log") \
  X(uint64_t, cleaner_bytes_moved, kCounter, "live bytes the cleaner moved") \
  X(uint64_t, cleaner_segments, kCounter, "segments the cleaner freed") \
  X(uint64_t, evicted_segments, kCounter, "segments given up to the tier the device caches") \
  X(uint64_t, evicted_bytes, kCounter, "stored bytes those segments held") \
  X(uint64_t, remote_objects, kGauge, "tier objects the store's files still point at") \
  X(uint64_t, remote_live_bytes, kGauge, "stored bytes of those runs") \
  X(uint64_t, remote_reads, kCounter, "reads served from the tier") \
  X(uint64_t, remote_read_bytes, kCounter, "bytes read from the tier") \
  X(uint64_t, cache_hit_bytes, kCounter, "an image mount's bytes its local cache served (-o cache=)") \
  X(uint64_t, cache_fill_bytes, kCounter, "an image mount's bytes its local cache took in from RADOS") \
  X(uint64_t, segment_size, kGauge, "bytes in a segment") \
  X(uint64_t, segments_total, kGauge, "segments in the store") \
  X(uint64_t, segments_free, kGauge, "segments free") \
  X(uint64_t, segments_data, kGauge, "segments holding data") \
  X(uint64_t, segments_meta, kGauge, "segments holding the metadata log") \
  X(uint64_t, segments_pending_free, kGauge, "segments free after the next commit") \
  X(uint64_t, live_bytes, kGauge, "device bytes of data segments still referenced (stored)") \
  X(uint64_t, live_file_bytes, kGauge, "file bytes those hold (more than live_bytes when compressed)") \
  X(uint64_t, dead_bytes, kGauge, "the rest of the data segments: reclaimable by cleaning") \
  X(uint64_t, fallocated_bytes, kGauge, "bytes fallocate reserved that are not written yet") \
  X(uint64_t, shared_bytes, kGauge, "stored bytes more than one file range points at") \
  X(uint64_t, bytes_copied, kCounter, "bytes copy_file_range shared instead of writing") \
  X(uint64_t, inodes, kGauge, "files, directories and links") \
  X(uint64_t, compressed_runs, kCounter, "runs the compressors stored compressed") \
  X(uint64_t, compress_raw_runs, kCounter, "runs the compressors stored raw: not worth compressing") \
  X(uint64_t, compress_bytes_in, kCounter, "file bytes into the compressors") \
  X(uint64_t, compress_bytes_out, kCounter, "stored bytes out of the compressors") \
  X(uint64_t, compress_pending_bytes, kGauge, "bytes written that wait for a compressor now") \
  X(uint64_t, compress_waits, kCounter, "writes that waited for compressor memory") \
  X(uint64_t, compress_skipped_runs, kCounter, "runs stored raw at once with the compressors behind (backlog=raw)") \
  X(uint64_t, runs_decoded, kCounter, "compressed runs decoded for reads") \
  X(uint64_t, backing_shortfall_bytes, kGauge, "bytes of a sparse store file that the free space under it cannot take now")

namespace ckptfs {

struct StoreStats {
  CKPTFS_STORE_STATS(CKPTFS_STAT_MEMBER)
  bool read_only = false;  // opened with MountOptions::read_only, or made so by a failed commit
};

namespace store_stats {
using Stats = StoreStats;
inline constexpr StatField<Stats> kFields[] = {CKPTFS_STORE_STATS(CKPTFS_STAT_FIELD)};
}  // namespace store_stats

// The figures of StoreStats but read_only, which the reports show apart.
inline constexpr const auto& kStoreStatFields = store_stats::kFields;

}  // namespace ckptfs
