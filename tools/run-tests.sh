#!/usr/bin/env bash
# Installs dependencies, builds, starts one Ceph test cluster for the whole run
# (tools/ceph-dev-cluster: 3 OSDs, pool ckptfs of size 2, in a new directory
# under /var/tmp that the tests find in CKPTFS_CEPH_DIR), runs every test (then
# the clang lock check and the sanitized runs), and on every way out stops the
# cluster and fails if any ckptfs mount or Ceph daemon is left behind. This is
# what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's wall time, printed (to stderr, which no step's redirection
# hides) as it ends and again, all together, at exit.
run_started=$(date +%s)
step_times=()
# timed NAME CMD...: runs CMD, prints and records how long it took; returns its status.
timed() {
  local name=$1 started took status=0
  shift
  started=$(date +%s)
  echo "== run-tests: $name" >&2
  "$@" || status=$?
  took=$(($(date +%s) - started))
  step_times+=("$(printf '%6d s  %s%s' "$took" "$name" "$([ $status -eq 0 ] || echo " (failed: $status)")")")
  echo "== run-tests: $name took $took s" >&2
  return $status
}
timed install-deps bash tools/install-deps.sh
timed build bash tools/build.sh
ckptfs_mounts() { grep -E ' fuse\.ckptfs ' /proc/mounts | awk '{print $2}' | sort || true; }
# ceph_daemons: "PID COMMAND LINE" of each live ceph-mon, ceph-mgr and ceph-osd (zombies are gone already).
ceph_daemons() {
  ps -eo pid=,stat=,comm=,args= | awk '$2 !~ /^Z/ && $3 ~ /^ceph-(mon|mgr|osd)$/ { $2 = $3 = ""; print }' |
    tr -s ' ' | sort || true
}
# shellcheck disable=SC2317  # end_daemons and finish run from the EXIT trap
# end_daemons LINES: ends each daemon of LINES (from ceph_daemons) that still
# runs as such, by its pid: SIGTERM, and SIGKILL 10 s later.
end_daemons() {
  local sig pid i alive
  for sig in TERM KILL; do
    for i in $(seq 100); do
      alive=$(comm -12 <(echo "$1") <(ceph_daemons))
      [ -n "$alive" ] || return 0
      if [ "$i" -eq 1 ]; then
        for pid in $(awk '{print $1}' <<<"$alive"); do kill -s "$sig" "$pid" 2>/dev/null; done
      fi
      sleep 0.1
    done
  done
  echo "run-tests: still running after SIGKILL: $alive" >&2
}
# check_skips: fails if a report under $CKPTFS_TEST_REPORTS has a skipped
# test that tests/allowed-skips does not list.
check_skips() {
  PYTHONPATH=$PWD/tools/python /usr/bin/python3 -m ckptfs_tools.skips --allowed tests/allowed-skips \
    "$CKPTFS_TEST_REPORTS/ctest.xml" "$CKPTFS_TEST_REPORTS/gtest"
}
before=$(ckptfs_mounts)
ceph_before=$(ceph_daemons)
ceph_dir=''
uring_was=$(tools/fuse-uring status)

# shellcheck disable=SC2317
# finish: the EXIT trap: stops the Ceph cluster, then fails the run for what
# the tests (or the cluster) left behind, and ends it: ckptfs mounts are
# detached, Ceph daemons that were not running before are ended by pid.
finish() {
  local status=$? leftover
  set +e
  # The background builds, if the run ended before they did.
  if [ -n "${sanitized_builds_pid:-}" ] && kill -0 "$sanitized_builds_pid" 2>/dev/null; then
    kill -TERM -- "-$sanitized_builds_pid" 2>/dev/null
    wait "$sanitized_builds_pid" 2>/dev/null
  fi
  # The machine's FUSE over io_uring setting, as the run found it.
  if [ "$uring_was" = Y ] || [ "$uring_was" = N ]; then
    [ "$(tools/fuse-uring status)" = "$uring_was" ] || tools/fuse-uring set "$uring_was" || status=1
  fi
  if [ -n "$ceph_dir" ]; then
    if ! tools/ceph-dev-cluster stop "$ceph_dir"; then
      echo "run-tests: the Ceph test cluster in $ceph_dir did not stop" >&2
      status=1
    fi
  fi
  leftover=$(comm -13 <(echo "$before") <(ckptfs_mounts) | grep . || true)
  if [ -n "$leftover" ]; then
    echo "run-tests: tests left ckptfs mounts behind: $leftover" >&2
    for m in $leftover; do fusermount3 -u -z "$m" || true; done
    status=1
  fi
  leftover=$(comm -13 <(echo "$ceph_before") <(ceph_daemons) | grep . || true)
  if [ -n "$leftover" ]; then
    echo "run-tests: Ceph daemons left behind:" >&2
    echo "$leftover" >&2
    end_daemons "$leftover"
    status=1
  fi
  [ -z "${xfstests_dir:-}" ] || rm -rf -- "$xfstests_dir"
  if [ -n "$ceph_dir" ]; then
    if [ "$status" -eq 0 ]; then
      rm -rf -- "$ceph_dir"
    else
      echo "run-tests: the Ceph test cluster's data and logs stay in $ceph_dir" >&2
    fi
  fi
  echo "== run-tests: step times"
  printf '%s\n' "${step_times[@]}"
  printf '%6d s  total\n' $(($(date +%s) - run_started))
  exit "$status"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

status=0
# The sanitized builds (tools/run-sanitized-tests.sh) go on in the
# background while the suites below run, at the lowest CPU priority: those
# suites mostly wait (on mounts, fsync, the OSDs) and the compilers take what
# they leave, so the builds cost the run little time and the tests little
# CPU. Their own session, so that finish can end them all.
# xfstests is built the same way, first (it is needed sooner), in the
# directory its run uses.
xfstests_dir=$(mktemp -d /var/tmp/ckptfs-ci-xfstests.XXXXXX)
sanitized_builds_log=$PWD/build/sanitized-builds.log
setsid nice -n 19 bash -c 'tools/run-xfstests --work "$1" --build-only; echo $? >"$1/.build-status"
  bash tools/run-sanitized-tests.sh --build-only tsan asan' _ "$xfstests_dir" >"$sanitized_builds_log" 2>&1 &
sanitized_builds_pid=$!
ceph_dir=$(mktemp -d /var/tmp/ckptfs-ci-ceph.XXXXXX)
timed ceph-cluster-start tools/ceph-dev-cluster start "$ceph_dir" --osds 3 >/dev/null
export CKPTFS_CEPH_DIR=$ceph_dir
# Every run's report, for the check of skipped tests at the end: ctest's
# JUnit XML, and a JSON file from each GoogleTest process (GTEST_OUTPUT names
# a directory: each writes BINARY.json there, BINARY_N.json after the first),
# the sanitized builds' and the binaries ctest does not split up included.
CKPTFS_TEST_REPORTS=$PWD/build/test-reports
rm -rf -- "$CKPTFS_TEST_REPORTS"
mkdir -p "$CKPTFS_TEST_REPORTS/gtest"
export GTEST_OUTPUT=json:$CKPTFS_TEST_REPORTS/gtest/
timed ctest bash -c 'cd build && ctest --output-on-failure --timeout 600 --output-junit "$1"' _ \
  "$CKPTFS_TEST_REPORTS/ctest.xml" ||
  status=$?
# The integration suite again with every mount over FUSE over io_uring
# (-o uring=on; the machine's setting is on for this step only, and put
# back by finish whatever happens). Its own UringChannelTest ran above.
if [ "$uring_was" != unsupported ]; then
  tools/fuse-uring set Y
  CKPTFS_TEST_MOUNT_OPTIONS=uring=on timed integration-over-io_uring \
    build/bin/integration_tests --gtest_brief=1 --gtest_filter='-UringChannelTest.*' || status=$?
  tools/fuse-uring set "$uring_was"
fi
# xfstests' cases of what the mount was fixed for (tests/xfstests/ci), in
# the directory of their own the background build used (once that build
# has ended; if it failed, the run builds again and says why), removed
# after.
while [ ! -e "$xfstests_dir/.build-status" ] && kill -0 "$sanitized_builds_pid" 2>/dev/null; do sleep 1; done
timed xfstests tools/run-xfstests --work "$xfstests_dir" --list tests/xfstests/ci || status=$?
# The sanitized runs, the Clang one with the lock analysis
# (tools/run-sanitized-tests.sh), once their builds are done; a failed build
# fails the run with its log's end.
wait_for_sanitized_builds() {
  local rc=0
  wait "$sanitized_builds_pid" || rc=$?
  sanitized_builds_pid=''
  grep 'run-sanitized-tests: built' "$sanitized_builds_log" || true
  if [ "$rc" -ne 0 ]; then
    echo "run-tests: the sanitized builds failed ($rc):" >&2
    tail -n 40 "$sanitized_builds_log" >&2
  fi
  return "$rc"
}
# The two run side by side, each with its output in a log shown when both
# are done: their tests are mostly one busy thread at a time, and on two
# cores the pair takes two thirds of the time of one after the other.
run_sanitized() {
  local step pid pids=() rc=0
  for step in tsan asan; do
    bash tools/run-sanitized-tests.sh "$step" >"build/sanitized-$step.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
  for step in tsan asan; do
    echo "== run-tests: tools/run-sanitized-tests.sh $step"
    cat "build/sanitized-$step.log"
  done
  return $rc
}
if timed sanitized-builds wait_for_sanitized_builds; then
  timed sanitized-tests run_sanitized || status=$?
else
  status=1
fi
# A skipped test is a check that did not happen: under CI it fails the run
# unless tests/allowed-skips lists it with the reason; elsewhere (a machine
# without torch, say) the skips are listed and the run goes on.
if [ "${CI:-}" = true ]; then
  timed skipped-tests check_skips || status=$?
else
  timed skipped-tests check_skips || echo "run-tests: tests were skipped (CI fails on that)" >&2
fi
exit $status
