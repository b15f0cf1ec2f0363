// CommittedImages: see committed_images.h.
#include "journal/committed_images.h"

#include <algorithm>

#include "util/aligned_buffer.h"

namespace ckptfs {

Result<CommittedImage> CommittedImages::CaptureCommitted() {
  CommittedImage image;
  Status failed;
  journal_->WithCommittedLog([&](const Superblock& head, const std::vector<uint32_t>& chain,
                                 const LogPosition& end, uint64_t commit_lsn) {
    // Under the commit lock: no log block, superblock or segment death can
    // change what follows until we are done, while data written after the
    // commit may still land (nothing committed points at it).
    const uint64_t segment_size = head.segment_size;
    if (chain.empty() || chain.back() != end.segment) {
      failed = Status::Corruption("log chain and log writer disagree on the last segment");
      return;
    }
    image.superblock.assign(kBlockSize, '\0');
    head.EncodeTo(image.superblock.data());
    image.store_id = head.store_id;
    image.data_start = head.data_start;
    image.segment_size = segment_size;
    image.segment_count = head.segment_count;
    image.commit_lsn = commit_lsn;
    // The log: whole segments up to the last, whose blocks end at `end`
    // (the bytes after it may be blocks of an older use of the space, which
    // the copy must not carry: zeros there end a replay as cleanly).
    for (size_t i = 0; i < chain.size(); ++i) {
      SegmentImage s;
      s.segment = chain[i];
      s.incarnation = device_->Incarnation(chain[i]);
      const uint64_t length = i + 1 < chain.size() ? segment_size : end.offset;
      if (length > 0) s.ranges.push_back(ByteRange{0, length});
      image.segments.push_back(std::move(s));
    }
    // The data: what was written in each segment's current incarnation; for
    // segments in use since the store was opened (incarnation 0, writes not
    // seen), the whole segment, which holds the runs the log points at and
    // can only gain unreferenced bytes after them.
    for (uint32_t segment : segments_->DataSegmentsInUse()) {
      SegmentImage s = device_->Written(segment);
      if (s.incarnation == 0) s.ranges = {ByteRange{0, segment_size}};
      if (!s.ranges.empty()) image.segments.push_back(std::move(s));
    }
    image.remote_objects = segments_->RemoteObjectsInUse();
  });
  CKPTFS_RETURN_IF_ERROR(failed);
  std::sort(image.segments.begin(), image.segments.end(),
            [](const SegmentImage& a, const SegmentImage& b) { return a.segment < b.segment; });
  return image;
}

}  // namespace ckptfs
