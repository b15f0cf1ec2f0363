#!/usr/bin/env bash
# Test of tools/ceph-dev-cluster on a real 1-OSD cluster: start it in a new
# directory, write and read an object through rados, stop it and check by pid
# that no daemon of that directory is left, start it again on its data and
# read the object back, kill the OSD and start it again, stop, destroy (the
# directory too, which holds a caller's log beside the cluster). Exit 77
# (skipped) where Ceph is not installed (tools/install-deps.sh installs it).
# usage: ceph_dev_cluster_test.sh [SCRIPT] (default: tools/ceph-dev-cluster of this tree)
set -uo pipefail
script=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tools/ceph-dev-cluster}
for c in ceph-mon ceph-mgr ceph-osd rados; do
  command -v "$c" >/dev/null || { echo "skipped: $c not found (tools/install-deps.sh)"; exit 77; }
done
[[ -x $script ]] || { echo "FAIL: $script is not executable"; exit 1; }

# On a disk: bluestore opens its block file with O_DIRECT, which tmpfs may refuse.
dir=$(mktemp -d "${CEPH_DEV_TEST_TMPDIR:-/var/tmp}/ceph-dev-cluster-test.XXXXXX") || exit 1
status=0
fail() {
  echo "FAIL: $*"
  status=1
}
# shellcheck disable=SC2317  # the EXIT trap
cleanup() {
  "$script" stop "$dir" || fail "stop at exit"
  if [[ $status == 0 ]]; then rm -rf -- "$dir"; else echo "kept $dir for a look (logs in $dir/log)"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export CEPH_CONF=$dir/ceph.conf
unset CEPH_DEV_OSDS

# elapsed T0: seconds since $EPOCHREALTIME was T0.
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# daemon_pids: the pids in the cluster's pid files, which start must have written.
daemon_pids() { cat "$dir"/run/*.pid 2>/dev/null; }

# of_dir PID: true if PID is a live process run with -c $dir/ceph.conf.
of_dir() {
  local a
  local -a argv
  mapfile -d '' -t argv 2>/dev/null <"/proc/$1/cmdline" || return 1
  for a in "${argv[@]}"; do [[ $a == "$CEPH_CONF" ]] && return 0; done
  return 1
}

# check_stopped WHEN PID...: no PID, nor any other process, still runs with this cluster's ceph.conf.
check_stopped() {
  local when=$1 pid p
  shift
  for pid; do
    if of_dir "$pid"; then fail "$when: pid $pid of a pid file ($(tr '\0' ' ' <"/proc/$pid/cmdline")) still runs"; fi
  done
  for p in /proc/[1-9]*; do
    pid=${p#/proc/}
    [[ " $* " != *" $pid "* ]] || continue
    if of_dir "$pid"; then fail "$when: pid $pid ($(tr '\0' ' ' <"$p/cmdline")) still runs"; fi
  done
}

# check_running WHEN: the pid files name exactly 3 live daemons of this cluster (mon, mgr, 1 OSD).
check_running() {
  local when=$1 pid n=0
  for pid in $(daemon_pids); do
    if of_dir "$pid"; then n=$((n + 1)); else fail "$when: pid $pid of a pid file is no daemon of $dir"; fi
  done
  [[ $n == 3 ]] || fail "$when: $n live daemons in the pid files, not 3"
}

echo "== start a new 1-OSD cluster in $dir"
# A caller's log may share the directory (the tier tests keep theirs there).
"$script" status "$dir" >/dev/null 2>&1 && fail "status of an empty directory exits 0"
t0=$EPOCHREALTIME
"$script" start "$dir" >>"$dir/caller.log" || { fail "start"; exit 1; }
grep -q "^CEPH_CONF=" "$dir/caller.log" || fail "start printed no CEPH_CONF= line"
echo "started in $(elapsed "$t0") s"
check_running "after start"
grep -q '^\[client\]' "$CEPH_CONF" || fail "no [client] section in ceph.conf"
grep -q '127.0.0.1' "$CEPH_CONF" || fail "the mon is not on 127.0.0.1"

echo "== write and read an object"
obj=$dir/obj.in
head -c 3000000 /dev/urandom >"$obj"
timeout 120 rados -p ckptfs put ckptfs-test-obj "$obj" || fail "rados put"
timeout 120 rados -p ckptfs get ckptfs-test-obj "$dir/obj.out" || fail "rados get"
cmp -s "$obj" "$dir/obj.out" || fail "the object read back differs"
size=$(ceph osd pool get ckptfs size -f json |
  PYTHONPATH="$(dirname "$script")/python" /usr/bin/python3 -m ckptfs_tools.json_field - size)
[[ $size == 1 ]] || fail "pool size $size on 1 OSD, not 1"
# Healthy still (a passing warning, such as slow ops on a loaded machine,
# gets a minute to clear).
for _ in $(seq 60); do
  [[ $(ceph health) == HEALTH_OK ]] && break
  sleep 1
done
[[ $(ceph health) == HEALTH_OK ]] || fail "health: $(ceph health detail)"

echo "== stop"
pids=$(daemon_pids)
t0=$EPOCHREALTIME
"$script" stop "$dir" || fail "stop"
echo "stopped in $(elapsed "$t0") s"
# shellcheck disable=SC2086  # one pid a word
check_stopped "after stop" $pids
"$script" stop "$dir" || fail "a second stop exits $?"
out=$("$script" status "$dir") || fail "status exits $?"
grep -q '^mon.a  *stopped' <<<"$out" || fail "status does not show the mon stopped: $out"

echo "== start again on the same data"
"$script" start "$dir" || { fail "start again"; exit 1; }
check_running "after the second start"
rm -f "$dir/obj.out"
timeout 120 rados -p ckptfs get ckptfs-test-obj "$dir/obj.out" || fail "rados get after the restart"
cmp -s "$obj" "$dir/obj.out" || fail "the object read back after the restart differs"

echo "== kill the OSD, start it again"
osd_pid=$(cat "$dir/run/osd.0.pid")
"$script" osd-stop "$dir" 0 --kill || fail "osd-stop --kill"
! of_dir "$osd_pid" || fail "osd.0 (pid $osd_pid) still runs after osd-stop --kill"
"$script" osd-start "$dir" 0 || fail "osd-start"
check_running "after osd-start"
rm -f "$dir/obj.out"
timeout 120 rados -p ckptfs get ckptfs-test-obj "$dir/obj.out" || fail "rados get after osd-start"
cmp -s "$obj" "$dir/obj.out" || fail "the object read back after osd-start differs"

echo "== stop and destroy"
pids=$(daemon_pids)
"$script" stop "$dir" || fail "stop"
# shellcheck disable=SC2086
check_stopped "after the last stop" $pids
if [[ $status == 0 ]]; then
  rm -f "$obj" "$dir/obj.out" # destroy removes a directory that holds no more than the cluster and logs
  "$script" destroy "$dir" || fail "destroy"
  [[ ! -e $dir ]] || fail "$dir is still there after destroy"
fi
[[ $status == 0 ]] && echo "PASS"
exit $status
