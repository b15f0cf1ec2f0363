#!/usr/bin/env bash
# The main job on a fresh machine: install, build, make a store, mount it,
# replay a reduced-scale Llama-3.1-405B checkpoint burst into it (3
# checkpoints of 1.7 GB, 8 ranks, fsync per file), read them back verified,
# check the store offline, and unmount.
#   CKPTFS_DEMO_DIR   where the store and mountpoint go (default /var/tmp/ckptfs-demo)
#   CKPTFS_DEMO_SIZE  store size (default 16G, allocated by mkfs)
#   CKPTFS_DEMO_SCALE tensor scale for ckpt-replay (default 0.0003)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
source tools/lib/bench-common.sh
BIN=build/bin

demo=${CKPTFS_DEMO_DIR:-/var/tmp/ckptfs-demo}
size=${CKPTFS_DEMO_SIZE:-16G}
scale=${CKPTFS_DEMO_SCALE:-0.0003}
store=$demo/store.img
mnt=$demo/mnt
mkdir -p "$mnt"
bench_unmount "$mnt"
bench_at_exit bench_detach "$mnt"

build/bin/mkfs.ckptfs --force --size "$size" "$store"
bench_mount "$store" "$mnt"
echo "quickstart: mounted $store on $mnt"
build/bin/ckpt-replay --workload llama3-405b --scale "$scale" --dir "$mnt" \
  --checkpoints 3 --keep 2 --restore --json "$demo/replay.json"
df -h "$mnt"
bench_unmount "$mnt"  # and waits for the daemon's flush, so that fsck sees it all
build/bin/ckptfs-fsck "$store"
echo "quickstart: done; results in $demo/replay.json, store at $store"
