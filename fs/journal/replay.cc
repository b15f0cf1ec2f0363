// ReplayStore implementation.
#include "journal/replay.h"

#include <string>
#include <variant>

#include "util/aligned_buffer.h"

namespace ckptfs {

Result<LogReplayResult> ReplayStore(BlockDevice* device, const Superblock& sb, Namespace* ns,
                                    SegmentTable* segments) {
  LogReader reader(device, sb);
  auto apply = [&](const Record& r) -> Status {
    if (auto* w = std::get_if<record::WriteExtent>(&r)) {
      // A remote run (evicted to the tier) lies within one segment's object.
      const PhysicalExtent& phys = w->phys;
      const bool inside = phys.remote() ? phys.remote_object() >= 1 &&
                                              phys.remote_offset() % kBlockSize == 0 &&
                                              phys.remote_offset() + phys.length <= sb.segment_size
                                        : sb.ContainsRun(phys.addr, phys.length);
      if (!inside) {
        return Status::Corruption("extent of inode " + std::to_string(w->ino) +
                                  " points outside the data segments");
      }
    }
    return ns->Apply(r);
  };
  CKPTFS_ASSIGN_OR_RETURN(LogReplayResult replay, reader.Replay(apply));
  segments->FinishReplay(replay.segments);
  return replay;
}

}  // namespace ckptfs
