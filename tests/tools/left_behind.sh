# shellcheck shell=bash
# left_behind.sh: sourced by the quick tests of tools/bench-*, which must leave
# nothing behind when they exit.

# check_left_behind NAME STORE_DIR: prints a FAIL line for STORE_DIR/mnt still
# mounted (and detaches it), for STORE_DIR/store.img, and for a ckptfs daemon
# still serving that image; returns 1 if there was any.
check_left_behind() {
  local name=$1 dir=$2 rc=0
  if mountpoint -q "$dir/mnt"; then
    echo "FAIL: $name left $dir/mnt mounted"
    fusermount3 -u -z "$dir/mnt"
    rc=1
  fi
  [[ ! -e "$dir/store.img" ]] || { echo "FAIL: store image left behind"; rc=1; }
  if pgrep -a -f -- "ckptfs $dir/store.img "; then
    echo "FAIL: $name left the daemon above running"
    rc=1
  fi
  return $rc
}
