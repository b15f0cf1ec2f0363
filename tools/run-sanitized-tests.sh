#!/usr/bin/env bash
# The checks CI runs beside the plain build (tools/run-tests.sh calls this):
#   tsan   ThreadSanitizer (GCC): the core's unit tests, the crash sweeps and
#          the mount's concurrency tests (a TSan-built daemon under real FUSE
#          load);
#   asan   one Clang build that serves two checks: every lock annotation of
#          the core, the tier, the daemon and the tools is checked as it
#          compiles (-Wthread-safety -Werror, fs/util/thread_annotations.h),
#          and AddressSanitizer + UBSan run the unit tests of the core, the
#          tools (ckpt-replay's command lines included) and the mount options;
#   clang  the lock analysis alone, without a sanitizer (what asan compiles,
#          quicker; for a local check).
# Any sanitizer report fails the run: reports are written to files (the
# daemon's stderr is not the test's) and the run fails if any exists.
# --build-only builds what the steps need and runs nothing (tools/run-tests.sh
# builds in the background while the other suites run, then runs the steps).
# Usage: tools/run-sanitized-tests.sh [--build-only] [tsan|asan|clang ...]   (default: tsan asan)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(tsan asan)

# The crash sweeps (tests/fs/crash_sweep_test.cc) mount the store once a
# cut point; under a sanitizer a mount costs about ten times as much, and
# the sweeps' 40-150 points were 40% of the sanitized runs' time. These runs
# check the recovery paths for races and memory errors, which 16 points
# spread over the burst reach as well; the plain run (ctest) keeps them all.
export CKPTFS_CRASH_SWEEP_POINTS=${CKPTFS_CRASH_SWEEP_POINTS:-16}

# What ckptfs_check_locks (CMakeLists.txt) covers: the libraries come with
# the programs.
lock_checked=(ckptfs ckptfs-fsck mkfs.ckptfs ckptfs-stat ckptfs-tier ckptfs-compress-bench ckpt-replay)

reports=$(mktemp -d /tmp/ckptfs-sanitizer.XXXXXX)
trap 'rm -rf "$reports"' EXIT

# Fails if a sanitizer wrote any report under $reports.
check_reports() {
  local found
  found=$(find "$reports" -type f -size +0 | head -20)
  if [ -n "$found" ]; then
    echo "run-sanitized-tests: $1 reported errors:" >&2
    for f in $found; do sed -n '1,60p' "$f" >&2; done
    return 1
  fi
}

# Runs each argument (a command line for bash -c) at the same time, and
# prints their outputs in order once all are done; fails if any did.
side_by_side() {
  local outputs job i rc=0
  local -a pids=()
  outputs=$(mktemp -d /tmp/ckptfs-side-by-side.XXXXXX)
  i=0
  for job; do
    bash -c "$job" >"$outputs/$i" 2>&1 &
    pids+=($!)
    i=$((i + 1))
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || rc=1
    cat "$outputs/$i"
  done
  rm -rf -- "$outputs"
  return $rc
}

# Configures and builds `targets` in build-$name with extra cmake args.
build() {
  local dir=$1; shift
  local -a config=()
  while [ "$1" != "--" ]; do config+=("$1"); shift; done
  shift
  # -O1 with line tables: quick to build, fast enough to run, and reports
  # still name the lines.
  local started=$SECONDS
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g1" \
    -DCKPTFS_BUILD_REPLAY=OFF "${config[@]}" >/dev/null
  cmake --build "$dir" -j"$jobs" --target "$@"
  echo "run-sanitized-tests: built $dir in $((SECONDS - started)) s"
}

for step in "${steps[@]}"; do
  case $step in
    clang)
      echo "== every library and program under clang -Wthread-safety -Werror"
      build build-clang -DCMAKE_CXX_COMPILER=clang++ -DCKPTFS_BUILD_REPLAY=ON -- "${lock_checked[@]}"
      ;;
    tsan)
      echo "== ThreadSanitizer: core unit tests, crash sweeps, mount concurrency"
      build build-tsan -DCKPTFS_SANITIZE=thread -- fs_tests integration_tests tier_unit_tests
      [ "$build_only" = 0 ] || continue
      failed=0
      export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 log_path=$reports/tsan"
      # TSan's runs were the sanitized step's longer side in CI (680 s, against
      # ASan's 370 s beside them), mostly one busy thread at a time: the
      # core's tests go in two shards side by side, then the mount's and the
      # tier's suites side by side.
      # Every core test but the single-threaded crash sweeps and the two
      # longest threaded ones (each 5-6 minutes under TSan on 2 cores; the
      # threaded uncompressed sweep and the torn/failed-write sweeps stay).
      core_filter='-CrashSweep.Sequential*:CrashSweep.ThreadedRanksCompressed*:CrashSweep.SecondCrash*'
      side_by_side \
        "GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=0 build-tsan/bin/fs_tests --gtest_brief=1 --gtest_filter='$core_filter'" \
        "GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=1 build-tsan/bin/fs_tests --gtest_brief=1 --gtest_filter='$core_filter'" ||
        failed=1
      # The mount's concurrency suites, and the drain's threads (its cycle,
      # the piece readers, the store's reads of the view) against images in
      # memory. Not the daemon draining to RADOS: librados and libceph-common
      # are not built with TSan, and their threads' accesses to the caller's
      # stack and buffers read as races on every connect (tried 2026-12-03).
      side_by_side \
        "build-tsan/bin/integration_tests --gtest_brief=1 --gtest_filter='PosixOpsTest.Concurrent*:StressTest.*:KillLoopTest.*:PersistenceTest.*:CoherenceTest.*'" \
        "build-tsan/bin/tier_unit_tests --gtest_brief=1" ||
        failed=1
      unset TSAN_OPTIONS
      check_reports ThreadSanitizer
      [ "$failed" = 0 ]
      ;;
    asan)
      echo "== Clang: lock analysis of every library and program; AddressSanitizer + UBSan: unit tests"
      build build-asan -DCMAKE_CXX_COMPILER=clang++ -DCKPTFS_SANITIZE=address -DCKPTFS_BUILD_REPLAY=ON -- \
        "${lock_checked[@]}" fs_tests tools_tests mount_tests tier_unit_tests
      [ "$build_only" = 0 ] || continue
      export ASAN_OPTIONS="log_path=$reports/asan detect_leaks=1"
      export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 log_path=$reports/ubsan"
      build-asan/bin/fs_tests --gtest_brief=1
      build-asan/bin/tools_tests --gtest_brief=1
      build-asan/bin/mount_tests --gtest_brief=1
      build-asan/bin/tier_unit_tests --gtest_brief=1
      unset ASAN_OPTIONS UBSAN_OPTIONS
      check_reports "AddressSanitizer/UBSan"
      ;;
    *) echo "run-sanitized-tests: unknown step '$step' (clang, tsan, asan)" >&2; exit 2 ;;
  esac
done
