#!/usr/bin/env bash
# Smoke test of tools/bench-compress: a real --quick run on a real mount
# (the encoder on synthetic tensors, the 405B burst with compression off and
# on). Checks that it runs end to end, reports every mode, that the
# compressed modes really stored less than they were given, and that no
# mount or store is left; it asserts nothing about speed. Exit 77 (skipped)
# where FUSE is missing.
# usage: bench_compress_quick_test.sh BENCH_COMPRESS WORK_DIR
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=left_behind.sh
source "$(dirname "${BASH_SOURCE[0]}")/left_behind.sh"
bench=$1 work=$2/bench-compress-quick
if ! command -v fusermount3 >/dev/null || [[ ! -e /dev/fuse ]]; then
  echo "skipped: needs fusermount3 and /dev/fuse"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
status=0
bash "$bench" --quick --data "$work/no-real-data" --store-dir "$work/store" --out "$work/report" ||
  { echo "FAIL: bench-compress exited $?"; status=1; }
check_left_behind bench-compress "$work/store" || status=1
if [[ $status == 0 ]]; then
  /usr/bin/python3 - "$work/report.md" <<'PYEOF' || status=1
import sys
rows = [l.split("|") for l in open(sys.argv[1]) if l.startswith("| none") or l.startswith("| zstd")]
modes = {r[1].strip(): float(r[6]) for r in rows if len(r) > 9}
if set(modes) != {"none", "zstd:-3", "zstd:1", "zstd:-3+compress_backlog=raw",
                  "zstd:-3+compress_when=idle"}:
    print("FAIL: modes reported:", sorted(modes)); sys.exit(1)
if (modes["none"] != 1.0 or modes["zstd:-3"] < 1.3 or modes["zstd:1"] < 1.3
        or modes["zstd:-3+compress_when=idle"] < 1.3):
    print("FAIL: stored ratios", modes); sys.exit(1)
PYEOF
fi
[[ $status == 0 ]] && rm -rf "$work"
exit $status
