// FailureState keeps the first failure, whoever reports after it and from
// whichever thread.
#include "util/failure_state.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace ckptfs {
namespace {

TEST(FailureState, StartsHealthy) {
  FailureState state;
  EXPECT_FALSE(state.failed());
  EXPECT_TRUE(state.Get().ok());
}

TEST(FailureState, TheFirstFailureIsTheOneKept) {
  FailureState state;
  EXPECT_TRUE(state.Set(Status::IOError("device write failed")));
  EXPECT_FALSE(state.Set(Status::NoSpace("a later consequence")));
  EXPECT_TRUE(state.failed());
  EXPECT_EQ(state.Get().message(), "device write failed");
}

TEST(FailureState, ConcurrentFailuresRecordExactlyOne) {
  FailureState state;
  std::atomic<int> recorded{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 1000; ++k) {
        if (state.Set(Status::IOError("thread " + std::to_string(i)))) recorded.fetch_add(1);
        (void)state.Get();  // readers race the writers
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(recorded.load(), 1);
  const std::string first = state.Get().message();
  EXPECT_EQ(first.rfind("thread ", 0), 0u);
  EXPECT_EQ(state.Get().message(), first);
}

}  // namespace
}  // namespace ckptfs
