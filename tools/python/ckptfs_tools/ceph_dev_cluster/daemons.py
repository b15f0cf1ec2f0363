"""Finding, launching and ending the daemons of one cluster directory.

A daemon is named by its pid file, but a pid is only trusted once its
command line says it is that daemon of this directory (its binary, -c
DIR/ceph.conf, -i ID): a pid file may outlive its process, and its pid be
another process's since.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from ckptfs_tools.ceph_dev_cluster.errors import Failure, say
from ckptfs_tools.ceph_dev_cluster.layout import MGR, MON, ClusterDir

DAEMON_BINARIES = ("ceph-mon", "ceph-mgr", "ceph-osd")


def daemon_of_argv(argv: list[str], conf: str) -> str | None:
    """NAME (mon.a, osd.2...) if ARGV is that of a ceph-mon, ceph-mgr or
    ceph-osd run with -c CONF -i ID; None otherwise."""
    if not argv:
        return None
    binary = os.path.basename(argv[0])
    if binary not in DAEMON_BINARIES:
        return None
    given_conf = given_id = ""
    for flag, value in zip(argv[1:], argv[2:]):
        if flag == "-c":
            given_conf = value
        elif flag == "-i":
            given_id = value
    if given_conf != conf or not given_id:
        return None
    return "%s.%s" % (binary[len("ceph-"):], given_id)


def read_argv(pid: int, proc: str = "/proc") -> list[str]:
    """The command line of PID; empty for a process gone or a zombie."""
    try:
        with open("%s/%d/cmdline" % (proc, pid), "rb") as f:
            raw = f.read()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0")[:-1]] if raw else []


def is_zombie(pid: int, proc: str = "/proc") -> bool:
    try:
        with open("%s/%d/stat" % (proc, pid)) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


class Daemons:
    """The daemons of CDIR: which run, starting them, ending them.

    Keeps the daemons it launched (their Popen, so as to reap them and for
    the mon helper to watch), whether it started anything (a failed start
    stops what it started: set before the first process exists), and the
    pids it ended; one instance per run of the tool, used by one thread.
    """

    def __init__(self, cdir: ClusterDir, stop_timeout: int, proc: str = "/proc"):
        self.cdir = cdir
        self.stop_timeout = stop_timeout
        self.proc = proc
        self.launched: dict[str, subprocess.Popen] = {}
        self.started = False
        self.ended: list[int] = []

    def name_of(self, pid: int) -> str | None:
        return daemon_of_argv(read_argv(pid, self.proc), self.cdir.conf)

    def running(self) -> list[tuple[str, int]]:
        """(NAME, PID) of each running daemon: those of the pid files first,
        then any other that /proc shows with the directory's command line."""
        found: list[tuple[str, int]] = []
        seen: set[int] = set()
        try:
            pid_files = sorted(f for f in os.listdir(self.cdir.run) if f.endswith(".pid"))
        except OSError:
            pid_files = []
        for f in pid_files:
            try:
                with open(os.path.join(self.cdir.run, f)) as fh:
                    pid = int(fh.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            if pid > 0 and self.name_of(pid) == f[:-len(".pid")]:
                seen.add(pid)
                found.append((f[:-len(".pid")], pid))
        for entry in os.listdir(self.proc):
            if entry.isdigit() and int(entry) not in seen:
                name = self.name_of(int(entry))
                if name:
                    found.append((name, int(entry)))
        return found

    def pids(self) -> dict[str, int]:
        """NAME -> PID of the running daemons; the pid file's where a stray
        second process has the same name."""
        found: dict[str, int] = {}
        for name, pid in self.running():
            found.setdefault(name, pid)
        return found

    def pid_of(self, name: str) -> int | None:
        return self.pids().get(name)

    def is_gone(self, pid: int, name: str) -> bool:
        """True once PID is no longer daemon NAME (a zombie has no command line)."""
        return self.name_of(pid) != name

    def watch_list(self) -> str:
        """"NAME:PID ..." of the daemons this run launched, for the mon module's CDC_WATCH."""
        return " ".join("%s:%d" % (n, p.pid) for n, p in self.launched.items())

    def launch(self, name: str) -> None:
        """Starts daemon NAME in the foreground mode, in a session of its own
        (a terminal's ^C to this tool does not reach it), its output appended
        to log/NAME.out; writes its pid to run/NAME.pid (the daemon writes the
        same file, and removes it when it exits cleanly)."""
        kind, ident = name.split(".", 1)
        self.started = True
        with open(self.cdir.output(name), "ab") as out:
            child = subprocess.Popen(["ceph-" + kind, "-f", "-c", self.cdir.conf, "-i", ident],
                                     stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                     close_fds=True, start_new_session=True)
        self.launched[name] = child
        with open(self.cdir.pid_file(name), "w") as f:
            f.write("%d\n" % child.pid)

    def _wait_gone(self, pids: dict[str, int], seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not all(self.is_gone(p, n) for n, p in pids.items()):
            self._reap_own()
            time.sleep(0.1)

    def _reap_own(self) -> None:
        for child in self.launched.values():
            child.poll()

    def kill(self, name: str, pid: int) -> None:
        """SIGKILL daemon NAME at PID; Failure if it survives 10 s."""
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._wait_gone({name: pid}, 10)
        if not self.is_gone(pid, name):
            raise Failure("%s (pid %d) survives SIGKILL" % (name, pid))
        self._forget(name, pid)

    def _forget(self, name: str, pid: int) -> None:
        self.ended.append(pid)
        for path in (self.cdir.pid_file(name), self.cdir.admin_socket(name)):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def end(self, names: list[str]) -> None:
        """Ends those of the daemons NAMES that run: SIGTERM, and SIGKILL for
        any still running stop_timeout s later. Failure if one survives SIGKILL."""
        running = self.pids()
        pids = {n: running[n] for n in names if n in running}
        for pid in pids.values():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        self._wait_gone(pids, self.stop_timeout)
        survivors = []
        for name, pid in pids.items():
            if self.is_gone(pid, name):
                self._forget(name, pid)
                continue
            say("%s (pid %d) still runs %d s after SIGTERM: SIGKILL" % (name, pid, self.stop_timeout))
            try:
                self.kill(name, pid)
            except Failure as e:
                say(str(e))
                survivors.append(name)
        if survivors:
            raise Failure("could not end %s" % " ".join(survivors))

    def reap(self, pids: list[int]) -> None:
        """Waits up to 5 s for the zombies of daemons that exited to be reaped
        (here if this run started them, else by init, which may take seconds),
        so that ps shows no ceph process once a stop returns."""
        for _ in range(50):
            self._reap_own()
            if not any(is_zombie(p, self.proc) for p in pids):
                return
            time.sleep(0.1)

    def stop_all(self) -> None:
        """Ends the OSDs (while the mon can still hear that they stop), then
        the mgr, then the mon; then anything /proc still shows. Failure if a
        daemon could not be ended; the others are ended all the same."""
        failed = []
        osds = [n for n, _ in self.running() if n.startswith("osd.")]
        for group in (osds, [MGR], [MON]):
            try:
                self.end(group)
            except Failure as e:
                failed.append(str(e))
        rest = [n for n, _ in self.running()]
        if rest:
            say("still running after the stop: %s; ending them too" % " ".join(rest))
            try:
                self.end(rest)
            except Failure as e:
                failed.append(str(e))
        self.reap(self.ended)
        if failed:
            raise Failure("; ".join(failed))
