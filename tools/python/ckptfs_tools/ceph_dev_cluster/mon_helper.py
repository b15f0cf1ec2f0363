"""The mon's side (the mon module, through librados) run in a child process:
mon commands, and the wait for HEALTH_OK.

A child process, not librados in this one: python3-rados has been seen to
crash (SIGSEGV) while the cluster was fine (CI, osd-start after osd-stop
--kill), and a crash must not take the tool, which then stops what it
started, down with it. A helper killed by a signal is run once more: its mon
commands are ones that may repeat.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from ckptfs_tools.ceph_dev_cluster.daemons import Daemons
from ckptfs_tools.ceph_dev_cluster.errors import Failure, say

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class MonHelper:
    """Runs the mon module for one verb, with that verb's deadline (Unix time)."""

    def __init__(self, daemons: Daemons, timeout: int):
        self.daemons = daemons
        self.started = time.time()
        self.deadline = self.started + timeout

    def _run(self, mode: str, args: list[str]) -> str:
        env = dict(os.environ, CDC_WATCH=self.daemons.watch_list(), CDC_LOGS=self.daemons.cdir.logs)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_PARENT, os.environ.get("PYTHONPATH")) if p)
        argv = [sys.executable, "-m", "ckptfs_tools.ceph_dev_cluster.mon", mode, self.daemons.cdir.conf,
                "%.3f" % self.deadline, "%.6f" % self.started] + args
        for attempt in (1, 2):
            # In a session of its own: a terminal's ^C is the tool's to handle
            # (it ends the helper below), not a traceback from the helper.
            child = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                                     start_new_session=True)
            try:
                out, _ = child.communicate()
            finally:
                if child.poll() is None:  # interrupted: the helper goes with the tool
                    child.kill()
                    child.wait()
            if child.returncode == 0:
                return out
            if child.returncode < 0 and attempt == 1:
                say("the helper (%s) died of signal %d; running it again" % (mode, -child.returncode))
                continue
            raise Failure("the mon commands failed" if mode == "mon" else "the cluster did not become healthy",
                          show_logs=True)
        raise AssertionError("unreachable")

    def commands(self, cmds: list[dict]) -> int:
        """Waits for the mon (until the deadline), runs CMDS; the osdmap epoch after them."""
        out = self._run("mon", [json.dumps(c) for c in cmds])
        try:
            return int(out.split()[0])
        except (ValueError, IndexError):
            raise Failure("the mon helper printed no osdmap epoch: %r" % out) from None

    def wait_healthy(self, pg_num: int, epoch: int, booted: list[int]) -> None:
        """Waits for HEALTH_OK with every OSD up and in and every PG active+clean,
        each OSD of BOOTED having booted since EPOCH."""
        self._run("wait", [str(self.daemons.cdir.osd_count()), str(pg_num), str(epoch)] + [str(i) for i in booted])
