// MountedTest: a GoogleTest fixture with a freshly formatted, mounted store;
// the daemon must exit 0 on the final unmount.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "mounted_store.h"

namespace ckptfs::testing {

class MountedTest : public ::testing::Test {
 protected:
  explicit MountedTest(std::string size = "512M") : size_(std::move(size)) {}
  void SetUp() override {
    ASSERT_EQ(store_.Format(size_), 0);
    ASSERT_TRUE(store_.Mount()) << store_.log();
  }
  void TearDown() override {
    if (store_.daemon_pid() > 0) {
      EXPECT_EQ(store_.Unmount(), 0) << store_.log();
    }
  }
  void Remount() {
    ASSERT_EQ(store_.Unmount(), 0) << store_.log();
    ASSERT_TRUE(store_.Mount()) << store_.log();
  }
  void CrashAndRemount() {
    store_.Kill();
    ASSERT_TRUE(store_.Mount()) << store_.log();
  }
  std::string P(const std::string& rel) { return store_.Path(rel); }

  const std::string size_;
  MountedStore store_;
};

}  // namespace ckptfs::testing
