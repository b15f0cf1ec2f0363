// ToErrno: the one place a core Status becomes the errno a FUSE reply carries.
#include "errno_map.h"

#include <gtest/gtest.h>

namespace ckptfs {
namespace {

TEST(ErrnoMap, AChangeToAReadOnlyStoreIsErofs) {
  EXPECT_EQ(ToErrno(Status::ReadOnly("store is mounted read-only")), EROFS);
}

// A store that failed takes no more changes either, but the cause is the
// device, and the application is told so.
TEST(ErrnoMap, AFailedStoreStaysEio) { EXPECT_EQ(ToErrno(Status::IOError("commit failed")), EIO); }

}  // namespace
}  // namespace ckptfs
