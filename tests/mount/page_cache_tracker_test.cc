// PageCacheTracker's choice per open: which handles read and write past
// the page cache, and which files may have cached pages to drop.
#include "page_cache_tracker.h"

#include <fcntl.h>
#include <gtest/gtest.h>

namespace ckptfs {
namespace {

using Mode = OpenHandle::Mode;
constexpr uint64_t kLarge = PageCacheTracker::kDirectReadMinBytes;

TEST(PageCacheTracker, LargeReadOnlyOpensReadDirectSmallOnesAndWritersKeepTheCache) {
  PageCacheTracker tracker;
  constexpr auto kPolicy = DirectReads::kLargeReadOnly;
  EXPECT_EQ(tracker.Open(1, O_RDONLY, kLarge, kPolicy).mode, Mode::kDirectIo);
  EXPECT_EQ(tracker.Open(2, O_RDONLY, kLarge - 1, kPolicy).mode, Mode::kCaching);
  EXPECT_EQ(tracker.Open(3, O_RDWR, kLarge, kPolicy).mode, Mode::kCaching);
  EXPECT_EQ(tracker.Open(4, O_RDONLY | O_DIRECT, kLarge, kPolicy).mode, Mode::kODirect);
  // The policies that do not look at the file.
  EXPECT_EQ(tracker.Open(5, O_RDONLY, 1, DirectReads::kAlways).mode, Mode::kDirectIo);
  EXPECT_EQ(tracker.Open(6, O_RDONLY, kLarge, DirectReads::kNever).mode, Mode::kCaching);
}

TEST(PageCacheTracker, ReadersAndWritersOfOneFileAgreeOnWhereTheBytesAre) {
  PageCacheTracker tracker;
  constexpr auto kPolicy = DirectReads::kLargeReadOnly;
  // A writer is open: its dirty pages are in the cache, so a reader is too.
  const OpenHandle writer = tracker.Open(1, O_WRONLY, kLarge, kPolicy);
  EXPECT_EQ(writer.mode, Mode::kCaching);
  EXPECT_TRUE(writer.writable);
  EXPECT_EQ(tracker.Open(1, O_RDONLY, kLarge, kPolicy).mode, Mode::kCaching);
  tracker.Released(1, writer);
  // Writers gone: a reader reads direct, and a writer opened beside it
  // writes direct, until the direct readers are gone.
  const OpenHandle reader = tracker.Open(1, O_RDONLY, kLarge, kPolicy);
  EXPECT_EQ(reader.mode, Mode::kDirectIo);
  const OpenHandle beside = tracker.Open(1, O_RDWR, kLarge, kPolicy);
  EXPECT_EQ(beside.mode, Mode::kDirectIo);
  tracker.Released(1, beside);
  tracker.Released(1, reader);
  EXPECT_EQ(tracker.Open(1, O_WRONLY, kLarge, kPolicy).mode, Mode::kCaching);
}

TEST(PageCacheTracker, DirectWritesDropPagesOnlyWhereSomeMayBeCached) {
  PageCacheTracker tracker;
  // Only O_DIRECT handles ever opened: nothing cached, nothing to drop.
  const OpenHandle direct = tracker.Open(1, O_RDWR | O_DIRECT, 1, DirectReads::kNever);
  EXPECT_FALSE(tracker.TakeInvalidation(1));
  // A caching handle may bring pages in (a direct-I/O one too, by mmap).
  const OpenHandle cached = tracker.Open(1, O_RDONLY, 1, DirectReads::kNever);
  EXPECT_TRUE(tracker.TakeInvalidation(1));
  EXPECT_TRUE(tracker.TakeInvalidation(1));  // still open: may cache again
  tracker.Released(1, cached);
  EXPECT_TRUE(tracker.TakeInvalidation(1));   // the pages it left
  EXPECT_FALSE(tracker.TakeInvalidation(1));  // dropped now
  tracker.Released(1, direct);
  const OpenHandle mapped = tracker.Open(2, O_RDONLY, 1, DirectReads::kAlways);
  EXPECT_TRUE(tracker.TakeInvalidation(2));
  tracker.Released(2, mapped);
  tracker.Evicted(2);  // the kernel's inode, and its pages, are gone
  EXPECT_FALSE(tracker.TakeInvalidation(2));
}

TEST(PageCacheTracker, AHandleSurvivesItsTripThroughFh) {
  for (Mode mode : {Mode::kCaching, Mode::kODirect, Mode::kDirectIo}) {
    for (bool writable : {false, true}) {
      const OpenHandle h{mode, writable};
      const OpenHandle back = OpenHandle::Decode(h.Encode());
      EXPECT_EQ(back.mode, mode);
      EXPECT_EQ(back.writable, writable);
    }
  }
}

}  // namespace
}  // namespace ckptfs
