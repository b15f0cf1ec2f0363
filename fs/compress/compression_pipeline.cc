// CompressionPipeline implementation.
#include "compress/compression_pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ckptfs {

CompressionPipeline::CompressionPipeline(const MountOptions& options, Journal* journal,
                                         SegmentTable* segments, EncoderTally* tally,
                                         Appender append)
    : options_(options),
      journal_(journal),
      segments_(segments),
      tally_(tally),
      append_(std::move(append)),
      // A quarter of the budget is for writes waiting to be compressed.
      runs_(options.memory_budget / 4) {}

CompressionPipeline::~CompressionPipeline() { Stop(); }

void CompressionPipeline::Start() {
  MutexLock lock(&threads_mu_);
  if (!compressors_.empty() || stopped_) return;
  for (unsigned i = 0; i < std::max(1u, options_.compressor_threads); ++i) {
    compressors_.emplace_back([this] { CompressorLoop(); });
  }
  running_.store(true);
}

void CompressionPipeline::Stop() {
  MutexLock lock(&threads_mu_);
  if (stopped_) return;
  stopped_ = true;
  // Every acknowledged write reaches the log before the store closes.
  running_.store(false);
  runs_.WaitPlaced(runs_.last_id());
  runs_.Stop();
  for (auto& t : compressors_) t.join();
  compressors_.clear();
}

Result<bool> CompressionPipeline::Submit(uint64_t ino, uint64_t offset, const char* data,
                                         size_t len, const CompressionPolicy& policy) {
  if (!running_.load()) return false;  // nothing would place it
  CKPTFS_ASSIGN_OR_RETURN(auto run, runs_.Add(ino, offset, policy, data, len,
                                               /*wait=*/!options_.compress_backlog_raw));
  if (!run) return false;  // the compressors are behind: the caller stores it raw
  // Room is promised now, so placing the run cannot run out of space after
  // the write was acknowledged; a store too full for the promise takes the
  // write synchronously, where a full store is this write's ENOSPC.
  if (!segments_->ReservePending(len).ok()) {
    runs_.Placed(run->id);
    return false;
  }
  Status s;
  {
    WriterLock lock(journal_->mu());
    if (!journal_->ns().Find(ino)) {
      s = Status::NotFound("inode freed during write");
    } else {
      s = journal_->Reserve(
          run->id, record::WriteExtent{ino, offset, static_cast<uint32_t>(len),
                                       PhysicalExtent{run->address(), static_cast<uint32_t>(len)},
                                       0, MtimeOf(*run)});
    }
  }
  if (!s.ok()) {
    segments_->ReleasePending(len);
    runs_.Placed(run->id);  // never mapped
    return s;
  }
  runs_.Queue(std::move(run));
  return true;
}

Status CompressionPipeline::Place(const PendingRun& run, ExtentEncoder* encoder) {
  std::vector<char> encoded;
  const Codec codec = encoder->Encode(run.policy, run.data.data(), run.data.size(), &encoded);
  const bool raw = codec == Codec::kRaw;
  auto ticket =
      append_(raw ? run.data.data() : encoded.data(), raw ? run.data.size() : encoded.size(),
              RunCoding{static_cast<uint8_t>(codec), static_cast<uint32_t>(run.data.size())});
  segments_->ReleasePending(run.data.size());
  if (!ticket.ok()) return ticket.status();
  {
    WriterLock lock(journal_->mu());
    CKPTFS_RETURN_IF_ERROR(journal_->Fill(
        run.id,
        record::WriteExtent{run.ino, run.offset, static_cast<uint32_t>(run.data.size()),
                            ticket->extent(), 0, MtimeOf(run)},
        run.address()));
  }
  ticket->Done();
  return Status::Ok();
}

void CompressionPipeline::CompressorLoop() {
  ExtentEncoder encoder;
  EncoderStats reported;
  while (auto run = runs_.Take()) {
    Status s = Place(*run, &encoder);
    // Counted before the run is reported placed: a Sync that waited for it
    // then sees its bytes in the stats.
    tally_->AddSince(encoder.stats(), reported);
    reported = encoder.stats();
    if (s.ok()) {
      runs_.Placed(run->id);
    } else {
      // The write was acknowledged and cannot be stored (the device failed,
      // or the space promised to it was not there): logging anything after
      // its place would record a state that never existed, so the store
      // stops taking changes; the run stays readable until unmount.
      runs_.Failed(run->id);
      (void)journal_->Fail(Status::IOError("cannot store " + std::to_string(run->data.size()) +
                                           " written bytes of inode " + std::to_string(run->ino) +
                                           " at offset " + std::to_string(run->offset) + ": " +
                                           s.ToString()));
    }
  }
}

}  // namespace ckptfs
