"""How the tool reports: a failure (exit status 1), a usage error (2), and
its messages on stderr, each line led by the tool's name."""

from __future__ import annotations

import sys

PROG = "ceph-dev-cluster"


class Failure(Exception):
    """A verb failed for good; the message says why (exit status 1). With
    SHOW_LOGS, the daemons' logs and the health say more (a cluster that did
    not come up)."""

    def __init__(self, message: str, show_logs: bool = False):
        super().__init__(message)
        self.show_logs = show_logs


class UsageError(Exception):
    """The command line or the environment is wrong (exit status 2)."""


def say(msg: str) -> None:
    print("%s: %s" % (PROG, msg), file=sys.stderr, flush=True)
