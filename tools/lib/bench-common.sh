# shellcheck shell=bash disable=SC2034  # the variables it sets are read by the scripts
# bench-common.sh: what the scripts in tools/ share: checks of their
# arguments and tools, a store's set-up (mkfs, mount, wait for the mount), the
# clean-up at exit (unmount, wait for the daemon, remove temporary files) and
# sampling of CPU time (the work's own, in a cgroup) and the daemon's memory. Sourced by bench-all,
# bench-compare, bench-compress, fio-compare, quickstart.sh and
# check-user-guide; sourcing runs nothing but the traps below.
#
# Sourcing installs one EXIT trap that runs what bench_at_exit registered, last
# first, and turns INT, TERM, HUP and PIPE into exits (130, 143, 129, 141) so
# that it runs then too. The functions work under set -euo pipefail: a failure
# is a non-zero return, which ends a script running with set -e.
# Messages start with "$BENCH_PROG: " (default: the script's name without .sh);
# the store's binaries are found in $BIN, which the script sets.

BENCH_PROG=${BENCH_PROG:-$(basename -- "$0" .sh)}
BENCH_TOOLS_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)  # tools/
BENCH_AT_EXIT=()       # commands for the EXIT trap, quoted; run last first
BENCH_DAEMON_PID=''    # the daemon of the last bench_mount or bench_mount_fg
BENCH_FG_PID=''        # the daemon bench_mount_fg started, until it is waited for
BENCH_FG_MNT=''        # and its mountpoint
BENCH_SHELL=$BASHPID   # the shell that sourced this; only it cleans up
BENCH_CGROUP=''        # the cgroup of the work measured (bench_cgroup_make), if there is one

# bench_say MSG...: prints "PROG: MSG" on stderr.
bench_say() { echo "$BENCH_PROG: $*" >&2; }

# bench_at_exit CMD [ARG...]: runs CMD ARG... when the script exits, before whatever was registered earlier.
bench_at_exit() {
  local cmd
  printf -v cmd '%q ' "$@"
  BENCH_AT_EXIT+=("$cmd")
}

# bench_cleanup: the EXIT trap; runs every registered command, last first, each whatever the one before returned.
bench_cleanup() {
  # A child forked by `&` and signalled before it execs still has this trap.
  [[ $BASHPID == "$BENCH_SHELL" ]] || return 0
  set +e
  local i
  for ((i = ${#BENCH_AT_EXIT[@]} - 1; i >= 0; i--)); do eval "${BENCH_AT_EXIT[i]}"; done
}
trap bench_cleanup EXIT
# Ctrl-C stops the whole process group at once; a TERM sent to the script alone
# takes effect when the current step ends. Either way the EXIT trap runs.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE

# bench_workdir: sets WORK to a new directory under ${TMPDIR:-/tmp}, removed at exit.
bench_workdir() {
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/$BENCH_PROG.XXXXXX")"
  bench_at_exit rm -rf -- "$WORK"
}

# bench_need_bins DIR NAME...: exits 2 unless every DIR/NAME is an executable (built by tools/build.sh).
bench_need_bins() {
  local dir=$1 b
  shift
  for b in "$@"; do
    [[ -x "$dir/$b" ]] || { bench_say "$dir/$b missing; run tools/build.sh"; exit 2; }
  done
}

# bench_need_cmds NAME...: exits 2 unless every NAME is a command on PATH (tools/install-deps.sh installs them).
bench_need_cmds() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || { bench_say "$t not found (tools/install-deps.sh)"; exit 2; }
  done
}

# bench_need_positive OPTION VALUE: exits 2 unless VALUE is a positive integer.
bench_need_positive() {
  [[ "$2" =~ ^[1-9][0-9]*$ ]] || { bench_say "$1 needs a positive integer"; exit 2; }
}

# bench_python: sets PY to Debian's python3 (the first one on PATH may be another installation), else python3,
# and puts tools/python, the scripts' modules (ckptfs_tools), on PYTHONPATH.
bench_python() {
  PY=/usr/bin/python3
  [[ -x $PY ]] || PY=python3
  export PYTHONPATH="$BENCH_TOOLS_DIR/python${PYTHONPATH:+:$PYTHONPATH}"
}

# bench_py MODULE ARG...: runs ckptfs_tools.MODULE (tools/python) with PY; bench_python first.
bench_py() { "$PY" -m "ckptfs_tools.$1" "${@:2}"; }

# bench_logged LOG CMD...: runs CMD with its output in $WORK/LOG; on failure shows the log's end and returns CMD's status.
bench_logged() {
  local log=$WORK/$1
  shift
  "$@" >"$log" 2>&1 || {
    local rc=$?
    bench_say "failed (rc $rc): $*"
    tail -n 20 "$log" >&2
    return $rc
  }
}

# bench_mkfs IMG SIZE [LOG]: formats IMG as a store of SIZE (mkfs.ckptfs --force), output in $WORK/LOG (mkfs.log).
bench_mkfs() { bench_logged "${3:-mkfs.log}" "$BIN/mkfs.ckptfs" --force --size "$2" "$1"; }

# bench_mount IMG MNT [OPTS]: mounts IMG on MNT (daemon detached, -o OPTS if given); sets BENCH_DAEMON_PID.
bench_mount() {
  "$BIN/ckptfs" "$1" "$2" ${3:+-o "$3"}
  BENCH_DAEMON_PID=$(bench_daemon_pid "$2") || { bench_say "cannot find the daemon serving $2"; return 1; }
  bench_cgroup_join "$BENCH_DAEMON_PID"
}

# bench_mount_fg IMG MNT OPTS LOG: runs the daemon as this shell's child (-f), its output appended to LOG, and waits up to 10 s for the mount; sets BENCH_DAEMON_PID.
bench_mount_fg() {
  "$BIN/ckptfs" "$1" "$2" -f ${3:+-o "$3"} 2>>"$4" &
  BENCH_FG_PID=$! BENCH_FG_MNT=$2 BENCH_DAEMON_PID=$!
  bench_cgroup_join "$BENCH_FG_PID"
  local i
  for ((i = 0; i < 100; i++)); do
    mountpoint -q "$2" && return 0
    bench_alive "$BENCH_FG_PID" || break
    sleep 0.1
  done
  mountpoint -q "$2" || { cat "$4" >&2; return 1; }
}

# bench_unmount MNT: unmounts MNT if mounted (trying twice) and waits for its daemon to exit; returns the daemon's status if it is this shell's child.
bench_unmount() {
  local mnt=$1 pid
  mountpoint -q "$mnt" || return 0
  pid=$(bench_daemon_pid "$mnt") || pid=''
  fusermount3 -u "$mnt" 2>/dev/null || { sleep 1; fusermount3 -u "$mnt"; } || return
  [[ -z $pid ]] || bench_wait_daemon "$pid"
}

# bench_detach MNT: for clean-up: bench_unmount, a lazy unmount where that fails (a file still open), and the end of a bench_mount_fg daemon that had not mounted yet.
bench_detach() {
  bench_unmount "$1" || { mountpoint -q "$1" && fusermount3 -u -z "$1"; }
  if [[ -n $BENCH_FG_PID && $BENCH_FG_MNT == "$1" ]]; then
    # It takes SIGTERM once it has mounted, and then unmounts and exits.
    kill "$BENCH_FG_PID" 2>/dev/null
    wait "$BENCH_FG_PID" 2>/dev/null
    BENCH_FG_PID=''
  fi
  return 0
}

# bench_wait_daemon PID: waits up to 120 s for a daemon to exit after its unmount (it flushes first); a child's status is returned.
bench_wait_daemon() {
  local pid=$1 i
  if [[ $pid == "$BENCH_FG_PID" ]]; then
    BENCH_FG_PID=''
    wait "$pid"
    return
  fi
  for ((i = 0; i < 1200; i++)); do
    bench_alive "$pid" || return 0
    sleep 0.1
  done
  bench_say "the daemon (pid $pid) is still running 120 s after its unmount"
  return 1
}

# bench_alive PID: true while PID runs (a zombie counts as gone).
bench_alive() {
  local stat
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}

# bench_daemon_pid MNT: prints the pid of the ckptfs process serving MNT, found by its argv (MNT spelled as when mounted).
bench_daemon_pid() {
  local p arg
  local -a argv
  for p in /proc/[0-9]*; do
    mapfile -d '' -t argv 2>/dev/null <"$p/cmdline" || continue
    [[ ${#argv[@]} -gt 1 && ${argv[0]##*/} == ckptfs ]] || continue
    for arg in "${argv[@]:1}"; do
      [[ $arg == "$1" ]] && { echo "${p#/proc/}"; return 0; }
    done
  done
  return 1
}

# bench_busy_jiffies: prints the busy time of all CPUs so far (user, nice, system, irq, softirq), in clock ticks.
bench_busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }

# bench_cgroup_make: makes a cgroup (v2) for the work's own processes, the
# daemons (bench_mount) and the load generators (bench_cpu_over), removed at
# exit; their CPU time is then what bench_cpu_over counts, the same on a
# busy machine as on an idle one. Without cgroup v2 or the right to make a
# group it says so, and bench_cpu_over counts every CPU's busy time.
bench_cgroup_make() {
  local root cg
  # cgroup2's mount: /sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1's
  # controllers. Its cpu.stat counts a group's CPU time with or without the
  # cpu controller.
  root=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
  if [[ -z $root ]]; then
    bench_say "no cgroup2 mounted: the CPU figures count the whole machine"
    return 0
  fi
  cg=$root/ckptfs-bench.$BENCH_SHELL
  if ! mkdir "$cg" 2>/dev/null || [[ ! -f $cg/cpu.stat ]]; then
    bench_say "cannot make the cgroup $cg (not root?): the CPU figures count the whole machine"
    rmdir "$cg" 2>/dev/null || true
    return 0
  fi
  BENCH_CGROUP=$cg
  bench_at_exit bench_cgroup_remove "$cg"
}

# bench_cgroup_remove DIR: moves what is left in the group DIR to the root group, and removes DIR.
bench_cgroup_remove() {
  local pid
  while read -r pid; do echo "$pid" >"$(dirname "$1")/cgroup.procs" 2>/dev/null; done <"$1/cgroup.procs"
  rmdir "$1" 2>/dev/null || bench_say "could not remove the cgroup $1"
}

# bench_cgroup_join PID: puts the process PID, all its threads, into BENCH_CGROUP (if there is one).
bench_cgroup_join() {
  [[ -z $BENCH_CGROUP ]] || echo "$1" >"$BENCH_CGROUP/cgroup.procs"
}

# bench_cpu_ticks: the CPU time counted so far, in clock ticks: that of
# BENCH_CGROUP's processes (user and system, with what the kernel charged
# them), or every CPU's busy time where there is no group.
bench_cpu_ticks() {
  if [[ -n $BENCH_CGROUP ]]; then
    awk -v hz="$(getconf CLK_TCK)" '$1 == "usage_usec" {printf "%d\n", $2 * hz / 1000000}' "$BENCH_CGROUP/cpu.stat"
  else
    bench_busy_jiffies
  fi
}

# bench_cpu_what: says what bench_cpu_over counts, for reports.
bench_cpu_what() {
  if [[ -n $BENCH_CGROUP ]]; then echo "own CPU of the daemon and the load generator"; else echo "all CPUs of the machine"; fi
}

# bench_cpu_over FILE CMD...: runs CMD (a command or a function; in
# BENCH_CGROUP if there is one) and writes the CPU ticks counted over it
# (bench_cpu_ticks) to FILE; returns CMD's status.
bench_cpu_over() {
  local out=$1 before after
  shift
  before=$(bench_cpu_ticks)
  if [[ -n $BENCH_CGROUP ]]; then
    # A subshell joins the group, and what it runs is born there.
    (echo "$BASHPID" >"$BENCH_CGROUP/cgroup.procs" && "$@") || return
  else
    "$@" || return
  fi
  after=$(bench_cpu_ticks)
  echo $((after - before)) >"$out"
}

# bench_status_kb PID FIELD: prints a kB field of /proc/PID/status (VmRSS, VmHWM); fails once PID is gone.
bench_status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

# bench_reset_peak PID: resets PID's VmHWM (clear_refs 5); where the kernel refuses, VmHWM keeps covering its whole life.
bench_reset_peak() { echo 5 >"/proc/$1/clear_refs" 2>/dev/null || true; }

# bench_sample_rss PID FILE: writes PID's VmRSS (kB) to FILE every 0.2 s, in the background, until PID exits or the script does.
bench_sample_rss() {
  (while bench_status_kb "$1" VmRSS 2>/dev/null; do sleep 0.2; done) >"$2" &
  bench_at_exit bench_stop "$!"
}

# bench_stop PID: stops a background child of this shell and reaps it.
bench_stop() {
  kill "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return 0
}
