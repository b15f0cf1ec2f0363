#!/usr/bin/env bash
# The Debian package as an operator uses it: built by tools/package.sh,
# installed with apt, every tool where mkfs(8), fsck(8), mount(8) and
# systemd look for it, each man page clean under man --warnings; a store
# made with mkfs -t ckptfs, mounted from an fstab line, written, unmounted,
# checked with fsck -t ckptfs and read back; then the package purged, with
# nothing of it left. The machine is left as the test found it (/etc/fstab,
# no package, no store, no mount), whatever happens.
# Exit 0 passed, 1 failed, 77 skipped: a ckptfs package is installed
# already, and this test would have to remove it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "package_test: FAILED: $*" >&2; exit 1; }

if dpkg-query -W -f='${Status}' ckptfs 2>/dev/null | grep -q "install ok installed"; then
  echo "package_test: a ckptfs package is installed already; the test leaves it alone" >&2
  exit 77
fi
work=$(mktemp -d /var/tmp/ckptfs-package-test.XXXXXX)
cp -p /etc/fstab "$work/fstab.before"
cleanup() {
  local rc=$?
  set +e
  if mountpoint -q "$work/mnt"; then fusermount3 -u "$work/mnt" || fusermount3 -u -z "$work/mnt"; fi
  cp -p "$work/fstab.before" /etc/fstab
  if dpkg-query -W -f='${Status}' ckptfs 2>/dev/null | grep -q installed; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq ckptfs >/dev/null 2>&1 || dpkg --purge ckptfs >/dev/null
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

deb=$(bash "$root/tools/package.sh") || fail "tools/package.sh"
echo "package_test: built $deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >/dev/null || fail "apt install $deb"

# Where each tool is looked for: mount.fuse3 runs ckptfs from the default
# PATH, mkfs(8) and fsck(8) run mkfs.TYPE and fsck.TYPE from sbin.
for f in /usr/bin/ckptfs /usr/bin/ckptfs-fsck /usr/bin/ckptfs-stat /usr/bin/ckptfs-tier /usr/bin/ckpt-replay \
         /usr/sbin/mkfs.ckptfs /usr/sbin/fsck.ckptfs /usr/lib/systemd/system/ckptfs@.service; do
  [ -e "$f" ] || fail "$f is not installed"
done
grep -q '^ExecStart=/usr/bin/ckptfs ' /usr/lib/systemd/system/ckptfs@.service || fail "the unit does not run /usr/bin/ckptfs"
# mount.fuse3 runs the first ckptfs of the default PATH: another install
# (cmake --install, /usr/local/bin) would stand in for the package's.
[ "$(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v ckptfs)" = /usr/bin/ckptfs ] ||
  fail "$(command -v ckptfs) comes before the package's /usr/bin/ckptfs on the default PATH"

# The man pages: each one found by name, clean under groff's warnings, and
# made from the tool's --help (its options are in it).
for page in ckptfs mkfs.ckptfs ckptfs-fsck fsck.ckptfs ckptfs-stat ckptfs-tier ckpt-replay; do
  warnings=$(man --warnings "$page" 2>&1 >/dev/null) || fail "man $page"
  [ -z "$warnings" ] || fail "man --warnings $page: $warnings"
done
man -P cat ckptfs 2>/dev/null | grep -q "metrics_file=PATH" || fail "ckptfs(8) lacks the options of ckptfs --help"
man -P cat fsck.ckptfs 2>/dev/null | grep -q -- "--repair" || fail "fsck.ckptfs(8) is not ckptfs-fsck's page"

# A store by mkfs -t, mounted from fstab, written.
store=$work/store.img
mkdir "$work/mnt"
mkfs -t ckptfs --size 1G "$store" >/dev/null || fail "mkfs -t ckptfs"
echo "$store $work/mnt fuse.ckptfs noauto,nosuid,nodev,memory=256M 0 0" >> /etc/fstab
mount "$work/mnt" || fail "mount from the fstab line"
grep -q " $work/mnt fuse.ckptfs " /proc/mounts || fail "not a fuse.ckptfs mount"
head -c 5000000 /dev/urandom > "$work/payload"
cp "$work/payload" "$work/mnt/shard.pt"
sync "$work/mnt/shard.pt"
ckptfs-stat "$work/mnt" | grep -q '^bytes_written' || fail "ckptfs-stat of the mount"
umount "$work/mnt" || fail "umount"

# fsck(8) runs fsck.ckptfs with its own flags: -n checks, -a repairs.
fsck -t ckptfs -n "$store" >/dev/null || fail "fsck -t ckptfs -n: exit $?"
fsck -t ckptfs -a "$store" >/dev/null || fail "fsck -t ckptfs -a: exit $?"
mount "$work/mnt" || fail "mount again"
cmp "$work/payload" "$work/mnt/shard.pt" || fail "the file read back differs"
umount "$work/mnt"

# Purged, the package leaves nothing.
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq ckptfs >/dev/null || fail "apt purge"
for f in /usr/bin/ckptfs /usr/sbin/mkfs.ckptfs /usr/sbin/fsck.ckptfs /usr/share/man/man8/ckptfs.8.gz \
         /usr/share/man/man8/ckptfs.8 /usr/lib/systemd/system/ckptfs@.service /usr/share/doc/ckptfs; do
  [ ! -e "$f" ] || fail "$f is left after the purge"
done
echo "package_test: passed"
