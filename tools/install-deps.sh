#!/usr/bin/env bash
# Installs what ckptfs needs to build, run and test on Debian 12. Idempotent.
set -euo pipefail
packages=(
  cmake g++ clang pkg-config
  fuse3 libfuse3-dev liburing-dev libzstd-dev libspdlog-dev libgtest-dev libisal-dev
  nlohmann-json3-dev libcli11-dev
  fio strace rsync attr python3-torch python3-numpy python3-matplotlib
  # metrics_test parses the Prometheus output with the reference parser
  python3-prometheus-client
  # the Debian package (tools/package.sh) and its man pages
  dpkg-dev help2man man-db
  ceph-mon ceph-mgr ceph-osd ceph-common librados-dev libradospp-dev
  # xfstests (tools/run-xfstests): its build and the programs its tests run
  xfslibs-dev uuid-dev uuid-runtime libtool-bin automake make libacl1-dev libaio-dev libattr1-dev
  libgdbm-dev libcap-dev xfsprogs e2fsprogs acl quota gawk bc dbench sqlite3
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[ -e /dev/fuse ] || { echo "install-deps: /dev/fuse is missing; load the fuse module" >&2; exit 1; }
