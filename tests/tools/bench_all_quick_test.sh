#!/usr/bin/env bash
# Smoke test of tools/bench-all: a real --quick run on a real mount. It checks
# that the script runs end to end, writes its report and leaves no mount and
# no store behind; it asserts nothing about speed. Exit 77 (skipped) where
# fio or FUSE is missing.
# usage: bench_all_quick_test.sh BENCH_ALL BIN_DIR WORK_DIR
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=left_behind.sh
source "$(dirname "${BASH_SOURCE[0]}")/left_behind.sh"
bench_all=$1 bin=$2 work=$3/bench-all-quick
if ! command -v fio >/dev/null || ! command -v fusermount3 >/dev/null || [[ ! -e /dev/fuse ]]; then
  echo "skipped: needs fio, fusermount3 and /dev/fuse"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
status=0
bash "$bench_all" --quick --bin "$bin" --plain "$work/plain" --store-dir "$work/store" --out "$work/report" ||
  { echo "FAIL: bench-all exited $?"; status=1; }
check_left_behind bench-all "$work/store" || status=1
for f in report.md report.json report.png; do
  [[ -s "$work/$f" ]] || { echo "FAIL: no $f"; status=1; }
done
# Every target has a row, and each row was measured: n/a means a step failed.
if [[ $status == 0 ]]; then
  /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/python/check_bench_all_report.py" "$work/report.json" || status=1
fi
[[ $status == 0 ]] && rm -rf "$work"
exit $status
