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
  /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/python/check_bench_compress_report.py" "$work/report.md" || status=1
fi
[[ $status == 0 ]] && rm -rf "$work"
exit $status
