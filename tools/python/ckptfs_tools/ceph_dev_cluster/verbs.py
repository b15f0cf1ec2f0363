"""The verbs: start, stop, osd-stop, osd-start, status, destroy (what each
does: tools/ceph-dev-cluster --help)."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys

from ckptfs_tools.ceph_dev_cluster import conf, ports
from ckptfs_tools.ceph_dev_cluster.create import create
from ckptfs_tools.ceph_dev_cluster.errors import PROG, Failure, say
from ckptfs_tools.ceph_dev_cluster.layout import MON, ClusterDir
from ckptfs_tools.ceph_dev_cluster.session import Session, ceph_cli, need_ceph


def mon_ports_free(cdir: ClusterDir) -> None:
    """Failure, saying which, if something listens on a port of the mon (fixed in ceph.conf)."""
    with open(cdir.conf) as f:
        wanted = conf.mon_ports(f.read())
    sockets = ports.tcp_sockets()
    for port in wanted:
        if ports.listening(port, sockets):
            raise Failure("something else listens on port %d, the mon's (mon host in %s): ss -ltnp 'sport = :%d'"
                          % (port, cdir.conf, port))


def remove_made(cdir: ClusterDir) -> None:
    for path in cdir.made_paths():
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def cmd_start(s: Session, osds_arg: str | None) -> None:
    osds = s.settings.osds_of_new_cluster(osds_arg)
    cdir = s.cdir
    if not cdir.holds_cluster() and cdir.made_paths():
        raise Failure("%s holds %s but no cluster of %s: give another directory"
                      % (cdir.path, " ".join(cdir.made_paths()), PROG))
    need_ceph()
    os.makedirs(cdir.path, exist_ok=True)
    s.lock()
    mon = s.mon_helper()
    s.stop_on_failure = True
    booted: list[int] = []
    if cdir.holds_cluster() and cdir.creation_finished():
        have = cdir.osd_count()
        if osds_arg is not None and osds != have:
            raise Failure("%s holds a cluster of %d OSD(s), not %d; destroy it first for another count"
                          % (cdir.path, have, osds))
        if not s.daemons.pid_of(MON):
            mon_ports_free(cdir)
            s.daemons.launch(MON)
        epoch = mon.commands([])  # the mon answers: it runs, and shows in /proc as itself
        running = s.daemons.pids()
        for name in cdir.names():
            if name not in running:
                s.daemons.launch(name)
                if name.startswith("osd."):
                    booted.append(int(name[4:]))
        launched = list(s.daemons.launched)
        if launched[:1] == [MON]:
            say("started the cluster in %s again (%s)" % (cdir.path, " ".join(launched)))
        elif launched:
            say("the cluster in %s runs; started %s" % (cdir.path, " ".join(launched)))
        else:
            say("the cluster in %s runs already" % cdir.path)
    else:
        if cdir.holds_cluster():
            say("%s holds a cluster whose creation did not finish: making it anew" % cdir.path)
            s.daemons.stop_all()
            remove_made(cdir)
        osds = osds or 1
        epoch = create(cdir, s.daemons, mon, osds, s.settings.osd_size_gib, s.settings.pg_num)
        booted = list(range(osds))
    mon.wait_healthy(s.settings.pg_num, epoch, booted)
    print("CEPH_CONF=%s" % shlex.quote(cdir.conf), flush=True)


def cmd_stop(s: Session) -> None:
    if s.cdir.holds_cluster():
        s.lock(proceed=True)
    stopped = sorted(n for n, _ in s.daemons.running())
    if not stopped:
        say("nothing of %s runs" % s.cdir.path)
        return
    try:
        s.daemons.stop_all()
    except Failure as e:
        raise Failure("could not stop every daemon of %s: %s" % (s.cdir.path, e)) from None
    say("stopped %s" % " ".join(stopped))


def cmd_osd_stop(s: Session, id_arg: str, how: str) -> None:
    s.need_cluster()
    name = "osd.%d" % s.osd_arg(id_arg)
    s.lock()
    pid = s.daemons.pid_of(name)
    if not pid:
        say("%s is not running" % name)
        return
    if how == "kill":
        s.daemons.kill(name, pid)
        s.daemons.reap([pid])
        say("killed %s (pid %d)" % (name, pid))
    else:
        s.daemons.end([name])
        s.daemons.reap([pid])
        say("stopped %s (pid %d)" % (name, pid))


def cmd_osd_start(s: Session, id_arg: str) -> None:
    s.need_cluster()
    osd = s.osd_arg(id_arg)
    need_ceph()
    s.lock()
    if not s.daemons.pid_of(MON):
        raise Failure("the mon of %s is not running: start the cluster (tools/ceph-dev-cluster start %s)"
                      % (s.cdir.path, s.cdir.path))
    mon = s.mon_helper()
    epoch = mon.commands([])
    if s.daemons.pid_of("osd.%d" % osd):
        say("osd.%d runs already" % osd)
        mon.wait_healthy(s.settings.pg_num, epoch, [])
    else:
        s.daemons.launch("osd.%d" % osd)
        mon.wait_healthy(s.settings.pg_num, epoch, [osd])


def cmd_status(s: Session) -> int:
    s.need_cluster()
    cdir = s.cdir
    print("cluster in %s: %d OSD(s); clients: CEPH_CONF=%s" % (cdir.path, cdir.osd_count(), cdir.conf))
    running = s.daemons.pids()
    for name in cdir.names():
        if name in running:
            print("%-6s running, pid %d" % (name, running[name]))
        else:
            print("%-6s stopped" % name)
    sys.stdout.flush()
    if MON not in running:
        print("the mon is not running")
        return 0
    return 0 if ceph_cli(cdir, ["-s"]) == 0 else 1


def cmd_destroy(s: Session) -> None:
    cdir = s.cdir
    if not os.path.lexists(cdir.path):
        say("no %s: nothing to destroy" % cdir.path)
        return
    if not os.path.isdir(cdir.path):
        raise Failure("%s is not a directory" % cdir.path)
    if not cdir.holds_cluster() and [e for e in os.listdir(cdir.path) if e != ".lock"]:
        raise Failure("%s holds no cluster of %s (and is not empty); not removing it" % (cdir.path, PROG))
    cmd_stop(s)
    remove_made(cdir)
    if os.path.exists(cdir.lock):
        os.unlink(cdir.lock)
    others = [e for e in sorted(os.listdir(cdir.path))
              if not (e.endswith(".log") and os.path.isfile(cdir.join(e)) and not os.path.islink(cdir.join(e)))]
    if others:
        say("removed the cluster in %s; kept the directory, which holds other files: %s"
            % (cdir.path, " ".join(others)))
    else:
        shutil.rmtree(cdir.path)
        say("removed %s" % cdir.path)


def run_verb(s: Session, args: argparse.Namespace) -> int:
    if args.verb == "start":
        cmd_start(s, args.osds)
    elif args.verb == "stop":
        cmd_stop(s)
    elif args.verb == "status":
        return cmd_status(s)
    elif args.verb == "destroy":
        cmd_destroy(s)
    elif args.verb == "osd-stop":
        cmd_osd_stop(s, args.id, args.how)
    else:
        cmd_osd_start(s, args.id)
    return 0
