// What a reader sees after a write has completed, whatever mix of O_DIRECT,
// buffered, mmap and asynchronous I/O made them (generic/451).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <liburing.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

// A page-aligned buffer that O_DIRECT takes.
struct AlignedBlock {
  explicit AlignedBlock(size_t n) : size(n) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, n) != 0) std::abort();
    data.reset(static_cast<char*>(p));
  }
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data;
  size_t size;
};

// The first offset where `got` differs from a file filled with `want`, or -1.
long FirstMismatch(const char* got, size_t n, char want) {
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want) return static_cast<long>(i);
  }
  return -1;
}

using CoherenceTest = MountedTest;

// xfstests' aio-dio-cycle-write, and more: while buffered readers keep
// pulling the file into the page cache, each round writes the whole file
// with one O_DIRECT write (asynchronously through io_uring, or with plain
// pwrite on alternate rounds) and, once it has completed, reads it back
// buffered, through a shared mapping made before any round, and with
// O_DIRECT: every read must return the round's bytes.
TEST_F(CoherenceTest, ReadsAfterADirectWriteSeeItWhateverTheyGoThrough) {
  constexpr size_t kSize = 640 << 10;  // generic/451's file
  const std::string path = P("cycled");
  {
    AlignedBlock first(kSize);
    std::memset(first.data.get(), 'A', kSize);
    const int fd = open(path.c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pwrite(fd, first.data.get(), kSize, 0), static_cast<ssize_t>(kSize));
    ASSERT_EQ(fsync(fd), 0);
    close(fd);
  }
  const int map_fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(map_fd, 0);
  void* mapped = mmap(nullptr, kSize, PROT_READ, MAP_SHARED, map_fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);

  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i) {
    readers.emplace_back([&] {
      std::vector<char> buf(kSize);
      while (!stop.load()) {
        const int fd = open(path.c_str(), O_RDONLY);
        if (fd < 0) continue;
        (void)!pread(fd, buf.data(), kSize, 0);
        close(fd);
      }
    });
  }

  io_uring ring;
  ASSERT_EQ(io_uring_queue_init(4, &ring, 0), 0);
  AlignedBlock block(kSize), check(kSize);
  std::vector<char> buffered(kSize);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  int rounds = 0;
  std::string failure;
  for (; failure.empty() && (rounds < 40 || std::chrono::steady_clock::now() < deadline) && rounds < 4000;
       ++rounds) {
    const char fill = rounds % 2 ? 'B' : 'C';
    const bool async = rounds % 4 < 2;
    std::memset(block.data.get(), fill, kSize);
    const int fd = open(path.c_str(), O_RDWR | O_DIRECT);
    ASSERT_GE(fd, 0);
    if (async) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      io_uring_prep_write(sqe, fd, block.data.get(), kSize, 0);
      ASSERT_EQ(io_uring_submit(&ring), 1);
      io_uring_cqe* cqe = nullptr;
      ASSERT_EQ(io_uring_wait_cqe(&ring, &cqe), 0);
      ASSERT_EQ(cqe->res, static_cast<int>(kSize));
      io_uring_cqe_seen(&ring, cqe);
    } else {
      ASSERT_EQ(pwrite(fd, block.data.get(), kSize, 0), static_cast<ssize_t>(kSize));
    }
    close(fd);

    const std::string how = std::string(async ? "io_uring" : "pwrite") + " O_DIRECT write of round " +
                            std::to_string(rounds) + ", then ";
    const int bfd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(bfd, 0);
    ASSERT_EQ(pread(bfd, buffered.data(), kSize, 0), static_cast<ssize_t>(kSize));
    close(bfd);
    if (long at = FirstMismatch(buffered.data(), kSize, fill); at >= 0) {
      failure = how + "a buffered read: stale byte at " + std::to_string(at);
      break;
    }
    if (long at = FirstMismatch(static_cast<const char*>(mapped), kSize, fill); at >= 0) {
      failure = how + "the mapping: stale byte at " + std::to_string(at);
      break;
    }
    const int dfd = open(path.c_str(), O_RDONLY | O_DIRECT);
    ASSERT_GE(dfd, 0);
    ASSERT_EQ(pread(dfd, check.data.get(), kSize, 0), static_cast<ssize_t>(kSize));
    close(dfd);
    if (long at = FirstMismatch(check.data.get(), kSize, fill); at >= 0) {
      failure = how + "an O_DIRECT read: stale byte at " + std::to_string(at);
    }
  }
  stop.store(true);
  for (auto& t : readers) t.join();
  io_uring_queue_exit(&ring);
  munmap(mapped, kSize);
  close(map_fd);
  EXPECT_EQ(failure, "") << "after " << rounds << " rounds";
}

}  // namespace
}  // namespace ckptfs::testing
