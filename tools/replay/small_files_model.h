// The small-files burst: not a model of one trainer but the shape that hurts a
// filesystem most in a sharded checkpoint (torch.distributed.checkpoint and
// friends): thousands of files of 64 KiB-4 MiB from a few writers at once,
// each fsynced. Sizes are log-uniform, so every octave holds as many files as
// any other, and they come from a hash of the file's index: the same run on
// another machine, or at another scale, writes the same sizes.
#pragma once

#include <cstdint>

#include "checkpoint_plan.h"
#include "workload_model.h"

namespace ckptfs::replay {

RankPlan SmallFilesRankPlan(const WorkloadSpec& spec, int rank, CheckpointId id);

// Files in one checkpoint: spec.small_files.files times the scale, at least
// one per rank, so a tiny scale still runs every writer.
uint64_t SmallFilesCount(const WorkloadSpec& spec);

// On-disk size of file `index` (0-based), torch.save framing included.
uint64_t SmallFileBytes(const SmallFilesSizes& sizes, uint64_t index);

// Bytes torch.save adds around a single tensor; the smallest file possible.
uint64_t SmallFileFramingBytes();

}  // namespace ckptfs::replay
