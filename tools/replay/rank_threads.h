// Runs one thread per rank, released together by a barrier, and times each:
// MLPerf-style, a phase lasts from the first rank's start to the last rank's
// end, and the spread between ranks is reported beside it.
#pragma once

#include <barrier>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ckptfs/status.h"

namespace ckptfs::replay {

struct RankOutcome {
  Status status;
  double seconds = 0;  // this rank's own start-to-finish
};

struct RanksOutcome {
  std::vector<RankOutcome> ranks;
  double seconds = 0;  // first start to last finish

  // The first failure, prefixed with its rank: thread i ran rank
  // first_rank + i (a run of ranks 4-7 has threads 0-3).
  Status FirstError(int first_rank = 0) const {
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (!ranks[i].status.ok()) return ranks[i].status.WithContext("rank " + std::to_string(first_rank + i));
    }
    return Status::Ok();
  }
};

inline RanksOutcome RunRanksConcurrently(int rank_count, const std::function<Status(int rank)>& work) {
  using Clock = std::chrono::steady_clock;
  RanksOutcome outcome;
  outcome.ranks.resize(rank_count);
  std::vector<Clock::time_point> starts(rank_count), ends(rank_count);
  std::barrier start_line(rank_count);
  {
    std::vector<std::jthread> threads;
    threads.reserve(rank_count);
    for (int rank = 0; rank < rank_count; ++rank) {
      threads.emplace_back([&, rank] {
        start_line.arrive_and_wait();
        starts[rank] = Clock::now();
        outcome.ranks[rank].status = work(rank);
        ends[rank] = Clock::now();
      });
    }
  }
  if (rank_count == 0) return outcome;
  Clock::time_point first = starts[0], last = ends[0];
  for (int rank = 0; rank < rank_count; ++rank) {
    first = std::min(first, starts[rank]);
    last = std::max(last, ends[rank]);
    outcome.ranks[rank].seconds = std::chrono::duration<double>(ends[rank] - starts[rank]).count();
  }
  outcome.seconds = std::chrono::duration<double>(last - first).count();
  return outcome;
}

}  // namespace ckptfs::replay
