// Compression for LogStructuredFs: which writes compress, how a write of a
// compressing file is handed to the compressor threads, and how those
// threads place the encoded run.
//
// A write to a compressing file maps its range to a pending run, reserves
// the place of its record in the pending log (log/pending_log.h) and
// returns. A compressor thread encodes the run, appends it to the data log
// and then, under the namespace lock, fills that place with the write's
// record and points whatever still maps the run at the stored copy. Commits
// stop at the first unfilled place, so the log stays a prefix of the
// operations in order; fsync (Sync) first waits for every run written
// before it to be placed.
#include <spdlog/spdlog.h>

#include "log_structured_fs.h"
#include "util/clock.h"

namespace ckptfs {

CompressionPolicy LogStructuredFs::PolicyFor(const Inode& node) const {
  auto it = node.xattrs.find(kCompressXattr);
  if (it == node.xattrs.end()) return default_policy_;
  auto policy = ParseCompressionPolicy(it->second);
  if (policy.ok()) return *policy;
  // SetXattr validates the value, so only a log written by another version
  // could hold one this version does not understand.
  spdlog::warn("inode {}: ignoring {}={}: {}", node.ino, kCompressXattr, it->second,
               policy.status().ToString());
  return default_policy_;
}

Status LogStructuredFs::InheritCompression(const Inode& parent, uint64_t child) {
  auto it = parent.xattrs.find(kCompressXattr);
  if (it == parent.xattrs.end()) return Status::Ok();
  return Mutate(record::SetXattr{child, kCompressXattr, it->second, NowNs()});
}

Result<bool> LogStructuredFs::WritePending(uint64_t ino, uint64_t offset, const char* data,
                                           size_t len, const CompressionPolicy& policy) {
  if (!compressing_.load()) return false;  // not started: nothing would place it
  CKPTFS_ASSIGN_OR_RETURN(auto run, pending_.Add(ino, offset, policy, data, len,
                                                 /*wait=*/!options_.compress_backlog_raw));
  if (!run) return false;  // the compressors are behind: the caller stores it raw
  // Room is promised now, so placing the run cannot run out of space after
  // the write was acknowledged; a store too full for the promise takes the
  // write synchronously, where a full store is this write's ENOSPC.
  if (!segments_.ReservePending(len).ok()) {
    pending_.Placed(run->id);
    return false;
  }
  {
    std::unique_lock<std::shared_mutex> lock(ns_mu_);
    Status s = CheckWritable();
    if (s.ok() && !ns_.Find(ino)) s = Status::NotFound("inode freed during write");
    if (s.ok()) {
      // The write's record keeps its place in the log; PlaceRun fills it in.
      segments_.NoteRecord(pending_log_.Reserve(run->id));
      s = ns_.Apply(record::WriteExtent{ino, offset, static_cast<uint32_t>(len),
                                        PhysicalExtent{run->address(), static_cast<uint32_t>(len)},
                                        0, run->time_ns});
      if (!s.ok()) pending_log_.Fill(run->id, {});
    }
    if (!s.ok()) {
      segments_.ReleasePending(len);
      pending_.Placed(run->id);  // never mapped
      return s;
    }
  }
  pending_.Queue(std::move(run));
  return true;
}

Status LogStructuredFs::PlaceRun(const PendingRun& run, ExtentEncoder* encoder) {
  std::vector<char> encoded;
  const Codec codec = encoder->Encode(run.policy, run.data.data(), run.data.size(), &encoded);
  const bool raw = codec == Codec::kRaw;
  auto ticket =
      AppendData(raw ? run.data.data() : encoded.data(), raw ? run.data.size() : encoded.size(),
                 RunCoding{static_cast<uint8_t>(codec), static_cast<uint32_t>(run.data.size())},
                 /*placing_pending=*/true);
  segments_.ReleasePending(run.data.size());
  if (!ticket.ok()) return ticket.status();
  std::unique_lock<std::shared_mutex> lock(ns_mu_);
  // The record is the write as it happened, in its place in the log: replay
  // then applies whatever came after it (overwrites, truncates, unlink) as
  // the namespace did.
  std::string record;
  EncodeRecord(record::WriteExtent{run.ino, run.offset, static_cast<uint32_t>(run.data.size()),
                                   ticket->extent(), 0, run.time_ns},
               &record);
  if (!pending_log_.Fill(run.id, std::move(record))) {
    return Status::IOError("no log place reserved for pending run " + std::to_string(run.id));
  }
  // In memory, only what still maps the run moves to the stored copy.
  if (Inode* node = ns_.Find(run.ino); node && node->is_regular()) {
    for (const ExtentPiece& p : node->extents.Lookup(run.offset, run.data.size())) {
      if (p.hole || p.phys.addr != run.address()) continue;
      CKPTFS_RETURN_IF_ERROR(ns_.Apply(record::WriteExtent{
          run.ino, p.offset, static_cast<uint32_t>(p.length), ticket->extent(), p.skip, 0}));
    }
  }
  ticket->Done();
  return Status::Ok();
}

void LogStructuredFs::CompressorLoop() {
  ExtentEncoder encoder;
  EncoderStats reported;
  while (auto run = pending_.Take()) {
    Status s = PlaceRun(*run, &encoder);
    if (s.ok()) {
      pending_.Placed(run->id);
    } else {
      // The write was acknowledged and cannot be stored (the device failed,
      // or the space promised to it was not there): logging anything after
      // its place would record a state that never existed, so the store
      // stops taking changes; the run stays readable until unmount.
      pending_.Failed(run->id);
      (void)Fail(Status::IOError("cannot store " + std::to_string(run->data.size()) +
                                 " written bytes of inode " + std::to_string(run->ino) +
                                 " at offset " + std::to_string(run->offset) + ": " +
                                 s.ToString()));
    }
    const EncoderStats& now = encoder.stats();
    std::lock_guard<std::mutex> lock(encoder_stats_mu_);
    encoder_stats_.runs += now.runs - reported.runs;
    encoder_stats_.runs_raw += now.runs_raw - reported.runs_raw;
    encoder_stats_.bytes_in += now.bytes_in - reported.bytes_in;
    encoder_stats_.bytes_out += now.bytes_out - reported.bytes_out;
    for (size_t c = 0; c <= kMaxCodec; ++c) {
      encoder_stats_.by_codec[c] += now.by_codec[c] - reported.by_codec[c];
    }
    reported = now;
  }
}

}  // namespace ckptfs
