#!/usr/bin/env bash
# Installs dependencies, builds, runs every test (then the clang lock check
# and the sanitized runs), and fails if any ckptfs mount is left behind. This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
ckptfs_mounts() { grep -E ' fuse\.ckptfs ' /proc/mounts | awk '{print $2}' | sort || true; }
before=$(ckptfs_mounts)
status=0
(cd build && ctest --output-on-failure --timeout 600) || status=$?
# Clang's lock analysis and the sanitized runs (tools/run-sanitized-tests.sh).
bash tools/run-sanitized-tests.sh || status=$?
leftover=$(comm -13 <(echo "$before") <(ckptfs_mounts) | grep . || true)
if [ -n "$leftover" ]; then
  echo "run-tests: tests left ckptfs mounts behind: $leftover" >&2
  for m in $leftover; do fusermount3 -u -z "$m" || true; done
  status=1
fi
exit $status
