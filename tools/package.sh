#!/usr/bin/env bash
# package.sh: builds the Debian package build/ckptfs_VERSION_ARCH.deb from the
# build in build/ (made first if there is none): the tools, man pages,
# systemd unit and docs that packaging/CMakeLists.txt installs, with
# dependencies computed from the binaries (dpkg-shlibdeps). Install it with
#   apt install ./build/ckptfs_VERSION_amd64.deb
# Prints the package's path. Exit: 0 built, 1 the build or cpack failed.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v dpkg-shlibdeps >/dev/null || { echo "package.sh: dpkg-shlibdeps is missing (apt install dpkg-dev)" >&2; exit 1; }
command -v help2man >/dev/null || { echo "package.sh: help2man is missing: the package would have no man pages" >&2; exit 1; }
[ -f build/CMakeCache.txt ] || bash tools/build.sh
# A build configured before help2man was installed has no man pages yet.
cmake build >/dev/null
(cd build && cpack -G DEB >cpack.log 2>&1) || { cat build/cpack.log >&2; exit 1; }
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' build/CMakeCache.txt)
deb=$(ls -t build/ckptfs_"${version}"_*.deb | head -1)
echo "$PWD/$deb"
