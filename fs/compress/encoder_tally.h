// EncoderTally: what every encoder of a store did (compressor threads and the
// cleaner's recompression), summed for the statistics. Each encoder keeps
// its own EncoderStats (not thread-safe) and adds what changed since it last
// reported.
#pragma once

#include "compress/extent_codec.h"
#include "util/mutex.h"

namespace ckptfs {

class EncoderTally {
 public:
  // Adds `now` minus `before` (an encoder's stats at two moments).
  void AddSince(const EncoderStats& now, const EncoderStats& before) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    total_.runs += now.runs - before.runs;
    total_.runs_raw += now.runs_raw - before.runs_raw;
    total_.bytes_in += now.bytes_in - before.bytes_in;
    total_.bytes_out += now.bytes_out - before.bytes_out;
    for (size_t c = 0; c <= kMaxCodec; ++c) total_.by_codec[c] += now.by_codec[c] - before.by_codec[c];
  }
  EncoderStats Total() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return total_;
  }

 private:
  mutable Mutex mu_;
  EncoderStats total_ GUARDED_BY(mu_);
};

}  // namespace ckptfs
