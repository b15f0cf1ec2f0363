"""What a dev cluster's directory holds, and which of it the cluster made.

A directory may hold other files beside a cluster (a test's log, say): only
the paths of made_paths() are the cluster's, and only those are removed.
"""

from __future__ import annotations

import collections
import os

from ckptfs_tools.ceph_dev_cluster.errors import UsageError

POOL = "ckptfs"
POOL_APP = "ckptfs"
MON = "mon.a"
MGR = "mgr.x"
MAX_OSDS = 3
# The first line of a ceph.conf this tool wrote: what makes a directory a cluster's.
MARK = "# ceph-dev-cluster: a single-machine test cluster"


class ClusterDir:
    """The paths of a cluster in one directory (absolute, whether it exists or not)."""

    def __init__(self, path: str):
        if not path:
            raise UsageError("DIR is empty")
        self.path = os.path.realpath(path)
        self.conf = os.path.join(self.path, "ceph.conf")
        self.run = os.path.join(self.path, "run")
        self.logs = os.path.join(self.path, "log")
        self.block = os.path.join(self.path, "block")
        self.crash = os.path.join(self.path, "crash")
        self.lock = os.path.join(self.path, ".lock")
        self.osds_file = os.path.join(self.path, "osds")
        self.created_file = os.path.join(self.path, "created")
        self.admin_keyring = os.path.join(self.path, "client.admin.keyring")
        self.mkfs_keyring = os.path.join(self.path, "mkfs.keyring")
        self.monmap = os.path.join(self.path, "monmap")

    def join(self, *parts: str) -> str:
        return os.path.join(self.path, *parts)

    def holds_cluster(self) -> bool:
        """True if the directory's ceph.conf is one this tool wrote."""
        try:
            with open(self.conf, "rb") as f:
                return f.readline().rstrip(b"\n") == MARK.encode()
        except OSError:
            return False

    def creation_finished(self) -> bool:
        return os.path.exists(self.created_file)

    def osd_count(self) -> int:
        try:
            with open(self.osds_file) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return 0

    def names(self) -> list[str]:
        """Every daemon of the cluster, in the order they start."""
        return [MON, MGR] + ["osd.%d" % i for i in range(self.osd_count())]

    def made_paths(self) -> list[str]:
        """The paths in the directory that a cluster of this tool makes and that exist."""
        fixed = [self.conf, self.osds_file, self.created_file, self.admin_keyring, self.mkfs_keyring,
                 self.monmap, self.join(MON), self.join(MGR)]
        osds = []
        if os.path.isdir(self.path):
            osds = sorted(self.join(e) for e in os.listdir(self.path)
                          if e.startswith("osd.") and e[4:5].isdigit())
        rest = [self.block, self.run, self.logs, self.crash]
        return [p for p in fixed + osds + rest if os.path.lexists(p)]

    def pid_file(self, name: str) -> str:
        return os.path.join(self.run, name + ".pid")

    def admin_socket(self, name: str) -> str:
        return os.path.join(self.run, name + ".asok")

    def log(self, name: str) -> str:
        return os.path.join(self.logs, name + ".log")

    def output(self, name: str) -> str:
        """Where a daemon's stdout and stderr go (what it says before its log opens)."""
        return os.path.join(self.logs, name + ".out")


def tail(path: str, lines: int) -> list[str]:
    """The last LINES non-blank lines of a log; none if it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return list(collections.deque((l.rstrip("\n") for l in f if l.strip()), maxlen=lines))
    except OSError:
        return []
