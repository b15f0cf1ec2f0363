"""The verbs of tools/ceph-dev-cluster and their options; `--help` for them.

Exit status: 0 done, 1 failed (why, on stderr), 2 a usage error; 130, 143 or
129 when SIGINT, SIGTERM or SIGHUP ended it. A start that fails or is
interrupted after it started daemons stops the cluster again (its data
stays).
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys

from ckptfs_tools.ceph_dev_cluster.errors import Failure, UsageError, say
from ckptfs_tools.ceph_dev_cluster.layout import MAX_OSDS, POOL, ClusterDir
from ckptfs_tools.ceph_dev_cluster.session import Session
from ckptfs_tools.ceph_dev_cluster.settings import Settings
from ckptfs_tools.ceph_dev_cluster.verbs import run_verb

DESCRIPTION = """\
A real Ceph cluster on this machine with everything in DIR: 1 mon, 1 mgr and
1 to 3 bluestore OSDs on sparse files, cephx on, bound to 127.0.0.1, with a
pool named %(pool)s. Clients use it with CEPH_CONF=DIR/ceph.conf, whose [client]
section names the client.admin keyring, e.g.
  CEPH_CONF=DIR/ceph.conf rados -p %(pool)s ls

verbs:
  start DIR [--osds N]  if DIR holds no cluster (other files may be there, such
                        as a caller's log), create one with N OSDs (1-3;
                        default $CEPH_DEV_OSDS, else 1) and the pool %(pool)s
                        (size min(2,N), min_size 1); if it holds one, start its
                        daemons that are not running, on the data they have.
                        Then wait for HEALTH_OK with every PG active+clean. On
                        failure: the logs' ends and the health detail, then the
                        cluster is stopped again and the exit status is 1.
  stop DIR              end every daemon of DIR (SIGTERM, SIGKILL after
                        $CEPH_DEV_STOP_TIMEOUT s); keep the data. Exit 0 when
                        none runs.
  osd-stop DIR ID [--kill|--clean]
                        --kill (the default): SIGKILL osd.ID, a dead OSD the
                        mon learns of from the other OSDs (at once when its
                        ports refuse them, else after the 20 s heartbeat
                        grace; with 1 OSD, not before it boots again).
                        --clean: SIGTERM, and the OSD tells the mon before it
                        exits.
  osd-start DIR ID      start osd.ID of a running cluster again; wait as start.
  status DIR            each daemon's pid, then ceph -s.
  destroy DIR           stop, then remove DIR (only what the cluster made if
                        DIR holds other files than logs).
""" % {"pool": POOL}

EPILOG = """\
environment:
  CEPH_DEV_OSDS=N          OSDs of a new cluster when --osds is not given (1)
  CEPH_DEV_TIMEOUT=S       start and osd-start give up after S seconds (120)
  CEPH_DEV_STOP_TIMEOUT=S  SIGKILL a daemon S seconds after SIGTERM (20)
  CEPH_DEV_OSD_SIZE=G      GiB of each OSD's sparse block file (16)
  CEPH_DEV_PG_NUM=N        pg_num of the pool %(pool)s (32)

DIR holds ceph.conf, client.admin.keyring, the daemons' data (mon.a, mgr.x,
osd.N), the OSDs' block files (block/osd.N.img), pid files and admin sockets
(run/), logs (log/NAME.log; log/NAME.out has a daemon's stderr) and crash/.

Options come after the verb (tools/ceph-dev-cluster start DIR --osds 3).
""" % {"pool": POOL}


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="tools/ceph-dev-cluster", usage="tools/ceph-dev-cluster VERB DIR [OPTION]",
                  allow_abbrev=False, description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = top.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    # Each verb's own parser takes no abbreviations either (--os is not --osds).
    verbs.add_parser = functools.partial(verbs.add_parser, allow_abbrev=False)
    verbs.required = True
    start = verbs.add_parser("start", help="create or start a cluster, wait for HEALTH_OK")
    start.add_argument("dir", metavar="DIR")
    start.add_argument("--osds", metavar="N", help="OSDs of a new cluster (1-%d)" % MAX_OSDS)
    for verb, what in (("stop", "end every daemon"), ("status", "each daemon's pid, then ceph -s"),
                       ("destroy", "stop, then remove what the cluster made")):
        verbs.add_parser(verb, help=what).add_argument("dir", metavar="DIR")
    osd_stop = verbs.add_parser("osd-stop", help="SIGKILL (--kill) or SIGTERM (--clean) an OSD")
    osd_stop.add_argument("dir", metavar="DIR")
    osd_stop.add_argument("id", metavar="ID")
    how = osd_stop.add_mutually_exclusive_group()
    how.add_argument("--kill", dest="how", action="store_const", const="kill", default="kill")
    how.add_argument("--clean", dest="how", action="store_const", const="clean")
    osd_start = verbs.add_parser("osd-start", help="start an OSD of a running cluster again")
    osd_start.add_argument("dir", metavar="DIR")
    osd_start.add_argument("id", metavar="ID")
    return top


class Interrupted(BaseException):
    """A signal ends the verb with the shell's status for it (128 + signal)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.status = 128 + signum


class SignalGuard:
    """While the verb runs, SIGINT, SIGTERM and SIGHUP raise Interrupted in
    it; once it has ended (defer()), they are only noted, so that showing why
    it failed and stopping what it started run to their end. The handlers
    found are put back on exit."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self):
        self.noted: int | None = None
        self._raising = True
        self._saved = {}

    def __enter__(self) -> "SignalGuard":
        for signum in self.SIGNALS:
            self._saved[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)

    def _on_signal(self, signum, _frame) -> None:
        if self.noted is None:
            self.noted = signum
        if self._raising:
            raise Interrupted(signum)

    def defer(self) -> None:
        self._raising = False


def usage_failed(e: UsageError) -> int:
    say(str(e))
    print("run 'tools/ceph-dev-cluster --help' for the usage", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        session = Session(ClusterDir(args.dir), Settings.from_env(os.environ, args.verb))
    except UsageError as e:
        return usage_failed(e)
    with SignalGuard() as signals:
        status, failure = 1, None
        try:
            try:
                status = run_verb(session, args)
            finally:
                signals.defer()
        except UsageError as e:
            status = usage_failed(e)
        except Failure as e:
            failure = e
        except Interrupted as e:
            status = e.status
        except Exception as e:  # noqa: BLE001  (an OSError, say: told as a failure, and cleaned up after)
            failure = Failure("%s: %s" % (type(e).__name__, e))
        if failure is not None:
            say(str(failure))
            if failure.show_logs or session.daemons.launched:
                session.show_failure()
        if status != 0 and session.stop_on_failure and session.daemons.started:
            say("start failed; stopping the cluster in %s (its data stays)" % session.cdir.path)
            try:
                session.daemons.stop_all()
            except Failure as e:
                say(str(e))
        if signals.noted is not None:
            status = 128 + signals.noted
    return status
