// ReplayStore implementation.
#include "journal/replay.h"

#include <string>
#include <variant>

namespace ckptfs {

Result<LogReplayResult> ReplayStore(BlockDevice* device, const Superblock& sb, Namespace* ns,
                                    SegmentTable* segments) {
  LogReader reader(device, sb);
  auto apply = [&](const Record& r) -> Status {
    if (auto* w = std::get_if<record::WriteExtent>(&r)) {
      if (!sb.ContainsRun(w->phys.addr, w->phys.length)) {
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
