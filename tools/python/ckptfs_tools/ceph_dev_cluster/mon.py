"""The mon's side of tools/ceph-dev-cluster, through librados (python3-rados):
waiting for the mon, running mon commands, waiting for HEALTH_OK.

    python3 -m ckptfs_tools.ceph_dev_cluster.mon mon  CONF DEADLINE T0 CMD_JSON...
        runs the mon commands (again while the mon answers EAGAIN or times
        out); prints the osdmap epoch after them
    python3 -m ckptfs_tools.ceph_dev_cluster.mon wait CONF DEADLINE T0 OSDS PG_MIN EPOCH [ID...]
        waits for HEALTH_OK, OSDS OSDs up and in, each OSD ID up since an
        osdmap epoch after EPOCH (booted since), and at least PG_MIN PGs all
        active+clean as the active mgr itself counts them (the mon's copy may
        be an old mgr's); all of it twice in a row

DEADLINE and T0 are Unix times: when to give up, and when the start began.
CDC_WATCH ("NAME:PID ...") names the daemons the run launched: a wait fails
at once when one has exited, pointing at its log in CDC_LOGS.
Exit status 0 done, 1 failed or timed out (the reason on stderr).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass


def log(msg):
    print("ceph-dev-cluster: " + msg, file=sys.stderr, flush=True)


class Failed(Exception):
    """The wait or a command failed for good; the message says why."""


def exited_daemon(watch: str, proc="/proc"):
    """(name, pid) of the first daemon of a CDC_WATCH list that is gone or a zombie, or None."""
    for item in watch.split():
        name, pid = item.split(":")
        try:
            with open(f"{proc}/{pid}/stat") as f:
                alive = f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            alive = False
        if not alive:
            return name, pid
    return None


def check_alive():
    gone = exited_daemon(os.environ.get("CDC_WATCH", ""))
    if gone:
        raise Failed("%s (pid %s) has exited; see %s"
                     % (gone[0], gone[1], os.path.join(os.environ.get("CDC_LOGS", "."), gone[0] + ".log")))


@dataclass(frozen=True)
class Assessment:
    ready: bool
    state: str  # what was seen, for the log


def assess(status: dict, dump: dict, pgs: dict | None, osds: int, pg_min: int, epoch: int,
           ids: list[int]) -> Assessment:
    """Whether the cluster is ready, from the mon's status and osd dump and the
    mgr's pg stat (None: no mgr answered)."""
    health = status["health"]["status"]
    m = status.get("osdmap", {})
    m = m.get("osdmap", m)  # nested before pacific
    n, up, inn = m.get("num_osds", 0), m.get("num_up_osds", 0), m.get("num_in_osds", 0)
    booted = {o["osd"] for o in dump["osds"] if o["up"] and o["up_from"] > epoch}
    waiting = sorted(set(ids) - booted)
    clean = False
    if pgs is None:
        pg_text = "no answer from a mgr"
    else:
        summary = pgs.get("pg_summary", {})
        num = summary.get("num_pgs", 0)
        by_state = {s["name"]: s["num"] for s in summary.get("num_pg_by_state", [])}
        pg_text = ", ".join("%d %s" % (v, k) for k, v in sorted(by_state.items())) or "none"
        if not pgs.get("pg_ready"):
            pg_text += " (the mgr has not heard from every osd yet)"
        clean = bool(pgs.get("pg_ready")) and num >= pg_min and by_state.get("active+clean", 0) == num
    state = "%s, %d/%d osds up, %d in, pgs: %s%s" % (
        health, up, osds, inn, pg_text,
        "; waiting for osd %s to boot" % ",".join(map(str, waiting)) if waiting else "")
    ready = health == "HEALTH_OK" and n == up == inn == osds and not waiting and clean
    return Assessment(ready, state)


class Mon:
    """A librados connection to the cluster's mon."""

    def __init__(self, conf: str, deadline: float):
        import rados  # python3-rados; imported here so the pure parts load without it
        self.rados, self.conf, self.deadline = rados, conf, deadline
        last = ""
        while time.time() < deadline:
            check_alive()
            c = rados.Rados(conffile=conf, conf={"client_mount_timeout": "5", "rados_mon_op_timeout": "10"})
            try:
                c.connect()
                self.cluster = c
                return
            except rados.Error as e:
                last = str(e)
                c.shutdown()
                time.sleep(0.5)
        raise Failed("no answer from the mon: %s" % last)

    def command(self, cmd: dict) -> bytes:
        """One mon command; CommandError with its code when it fails."""
        try:
            ret, out, err = self.cluster.mon_command(json.dumps(cmd), b"")
        except self.rados.Error as e:
            ret, out, err = -110, b"", str(e)
        if ret != 0:
            raise CommandError("mon command '%s' failed (%d): %s" % (cmd["prefix"], ret, err), ret)
        return out

    def run(self, cmd: dict) -> bytes:
        """A mon command, again while the mon answers EAGAIN or times out, until the deadline."""
        while True:
            check_alive()
            try:
                return self.command(cmd)
            except CommandError as e:
                if e.code not in (-11, -110) or time.time() >= self.deadline:
                    raise Failed(str(e)) from e
            time.sleep(0.5)

    def look(self, osds, pg_min, epoch, ids) -> Assessment:
        status = json.loads(self.command({"prefix": "status", "format": "json"}))
        dump = json.loads(self.command({"prefix": "osd dump", "format": "json"}))
        pgs = mgr_pg_stat(self.conf) if status.get("mgrmap", {}).get("available") else None
        return assess(status, dump, pgs, osds, pg_min, epoch, ids)


class CommandError(Exception):
    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def mgr_pg_stat(conf):
    """The active mgr's "pg stat", or None if none answers in 15 s. The ceph
    CLI in a child process: a mgr command waits for an active mgr with no
    timeout of its own, and such a wait is best ended by ending its process."""
    try:
        out = subprocess.run(["ceph", "-c", conf, "--connect-timeout", "10", "pg", "stat", "-f", "json"],
                             stdin=subprocess.DEVNULL, capture_output=True, timeout=15, check=True).stdout
        return json.loads(out)
    except (subprocess.SubprocessError, OSError, ValueError):
        return None


def wait_healthy(mon: Mon, t0: float, osds: int, pg_min: int, epoch: int, ids: list[int]):
    said, state, good = time.time(), "nothing yet", 0
    while True:
        check_alive()
        try:
            seen = mon.look(osds, pg_min, epoch, ids)
            ready, state = seen.ready, seen.state
        except (CommandError, KeyError, ValueError, TypeError) as e:
            ready, state = False, "error: %s" % (e.args[0] if e.args else e)
        good = good + 1 if ready else 0
        if good >= 2:
            log("HEALTH_OK after %.1f s: %s" % (time.time() - t0, state))
            return
        if time.time() >= mon.deadline:
            raise Failed("timed out; last seen: " + state)
        if time.time() - said >= 10:
            log("waiting: " + state)
            said = time.time()
        time.sleep(0.5)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 4 or argv[0] not in ("mon", "wait") or (argv[0] == "wait" and len(argv) < 7):
        print(__doc__, file=sys.stderr)
        return 2
    mode, conf, deadline, t0, args = argv[0], argv[1], float(argv[2]), float(argv[3]), argv[4:]
    try:
        mon = Mon(conf, deadline)
        if mode == "mon":
            for a in args:
                mon.run(json.loads(a))
            print(json.loads(mon.run({"prefix": "osd dump", "format": "json"}))["epoch"])
        else:
            wait_healthy(mon, t0, int(args[0]), int(args[1]), int(args[2]), [int(i) for i in args[3:]])
    except Failed as e:
        log(str(e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
