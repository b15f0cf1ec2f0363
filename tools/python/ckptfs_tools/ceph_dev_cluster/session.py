"""One run of a verb on one cluster directory: its daemons, the directory's
lock, the checks the verbs share, and what a failure shows."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time

from ckptfs_tools.ceph_dev_cluster.daemons import Daemons
from ckptfs_tools.ceph_dev_cluster.errors import PROG, Failure, say
from ckptfs_tools.ceph_dev_cluster.layout import MON, ClusterDir, tail
from ckptfs_tools.ceph_dev_cluster.mon_helper import MonHelper
from ckptfs_tools.ceph_dev_cluster.settings import Settings

LOCK_WAIT_S = 300
NEEDED_COMMANDS = ("ceph", "ceph-mon", "ceph-mgr", "ceph-osd", "ceph-authtool", "monmaptool")


class Session:
    """One run of a verb on one directory: its daemons, its lock, and whether a
    failure must stop what it started."""

    def __init__(self, cdir: ClusterDir, settings: Settings):
        self.cdir = cdir
        self.settings = settings
        self.daemons = Daemons(cdir, settings.stop_timeout)
        self.stop_on_failure = False
        self._lock_fd: int | None = None

    def lock(self, proceed: bool = False, wait_s: float = LOCK_WAIT_S) -> None:
        """One verb at a time per directory: waits for its lock up to WAIT_S,
        then fails, or with PROCEED (a stop) goes on without it. The lock is
        held until the run ends (its descriptor is not inherited by daemons)."""
        fd = os.open(self.cdir.lock, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._lock_fd = fd
                return
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise
            if time.monotonic() >= deadline:
                os.close(fd)
                if not proceed:
                    raise Failure("%s is busy: another %s has held its lock for %g s"
                                  % (self.cdir.path, PROG, wait_s))
                say("%s is still locked by another %s after %g s; going on without the lock"
                    % (self.cdir.path, PROG, wait_s))
                return
            time.sleep(0.2)

    def mon_helper(self) -> MonHelper:
        return MonHelper(self.daemons, self.settings.timeout)

    def need_cluster(self) -> None:
        if not self.cdir.holds_cluster():
            raise Failure("%s holds no cluster of %s" % (self.cdir.path, PROG))

    def osd_arg(self, text: str) -> int:
        count = self.cdir.osd_count()
        if not re.fullmatch(r"[0-9]+", text) or int(text) >= count:
            raise Failure("%s has no osd.%s (its OSDs: 0 to %d)" % (self.cdir.path, text, count - 1))
        return int(text)

    def show_failure(self) -> None:
        """What a failed start or osd-start shows: the log ends of the daemons
        it started (of all if none) and the health."""
        for name in list(self.daemons.launched) or self.cdir.names():
            for path in (self.cdir.log(name), self.cdir.output(name)):  # .out: it failed before its log opened
                lines = tail(path, 12)
                if lines:
                    print("----- the end of %s" % path, file=sys.stderr)
                    print("\n".join(lines), file=sys.stderr, flush=True)
                    break
        if self.daemons.pid_of(MON):
            print("----- ceph health detail", file=sys.stderr, flush=True)
            ceph_cli(self.cdir, ["health", "detail"], stdout=sys.stderr)
        else:
            print("----- the mon is not running", file=sys.stderr, flush=True)


def ceph_cli(cdir: ClusterDir, args: list[str], stdout=None) -> int:
    try:
        return subprocess.run(["ceph", "-c", cdir.conf, "--connect-timeout", "10"] + args,
                              stdin=subprocess.DEVNULL, stdout=stdout, timeout=30).returncode
    except subprocess.TimeoutExpired:
        say("ceph %s: no answer in 30 s" % " ".join(args))
        return 124


def need_ceph() -> None:
    for command in NEEDED_COMMANDS:
        if shutil.which(command) is None:
            raise Failure("%s not found (tools/install-deps.sh installs Ceph)" % command)
    # python3-rados: what the mon module talks to the mon with. Imported in a
    # child, as the helper will: a module that is there but cannot load
    # librados fails here, not once the daemons run.
    if subprocess.run([sys.executable, "-c", "import rados"], stdin=subprocess.DEVNULL,
                      capture_output=True).returncode != 0:
        raise Failure("%s cannot import the rados module: use Debian's /usr/bin/python3 with python3-rados "
                      "(a dependency of ceph-common)" % sys.executable)
