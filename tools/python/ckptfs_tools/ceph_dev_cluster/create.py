"""A new cluster in a directory: its ceph.conf, every key (given to the mon at
its mkfs), the mon's and the OSDs' mkfs, the OSDs and the pool registered
with the mon, and the daemons started (not waited for)."""

from __future__ import annotations

import mmap
import os
import subprocess
import uuid

from ckptfs_tools.ceph_dev_cluster import conf, ports
from ckptfs_tools.ceph_dev_cluster.daemons import Daemons
from ckptfs_tools.ceph_dev_cluster.errors import Failure, say
from ckptfs_tools.ceph_dev_cluster.layout import MGR, MON, POOL, POOL_APP, ClusterDir, tail
from ckptfs_tools.ceph_dev_cluster.mon_helper import MonHelper

ADMIN_CAPS = [("mon", "allow *"), ("osd", "allow *"), ("mgr", "allow *"), ("mds", "allow *")]
MGR_CAPS = [("mon", "allow profile mgr"), ("osd", "allow *"), ("mds", "allow *")]
MON_CAPS = [("mon", "allow *")]
OSD_CAPS = [("mon", "allow profile osd"), ("mgr", "allow profile osd"), ("osd", "allow *")]


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise Failure("%s failed: %s" % (what, (done.stderr or done.stdout).strip()[-400:]))


def new_key(keyring: str, name: str, caps: list[tuple[str, str]]) -> None:
    """A keyring file holding a new key for NAME with CAPS."""
    argv = ["ceph-authtool", "--create-keyring", keyring, "--gen-key", "-n", name]
    for service, cap in caps:
        argv += ["--cap", service, cap]
    _run(argv, "ceph-authtool for " + name)


def import_key(into: str, keyring: str) -> None:
    _run(["ceph-authtool", into, "--import-keyring", keyring], "ceph-authtool --import-keyring " + keyring)


def log_end(path: str) -> str:
    return "\n".join(tail(path, 5))


def check_direct_io(directory: str) -> None:
    """Bluestore writes its block file with O_DIRECT, which some file systems
    (tmpfs) refuse: one aligned 4 KiB direct write tells."""
    probe = os.path.join(directory, "direct-io-check")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
        try:
            with mmap.mmap(-1, 4096) as page:  # page-aligned, as O_DIRECT wants
                os.write(fd, page)
        finally:
            os.close(fd)
    except OSError:
        raise Failure("%s is on a file system without O_DIRECT (tmpfs?), which bluestore needs: "
                      "choose a directory on a disk" % directory) from None
    finally:
        try:
            os.unlink(probe)
        except FileNotFoundError:
            pass


def create(cdir: ClusterDir, daemons: Daemons, mon: MonHelper, osds: int, osd_size_gib: int, pg_num: int) -> int:
    """Makes a new cluster of OSDS OSDs in CDIR and starts its daemons; the
    osdmap epoch once the OSDs and the pool are registered."""
    say("creating a cluster of 1 mon, 1 mgr and %d OSD(s) in %s" % (osds, cdir.path))
    daemons.started = True  # a failure from here on stops whatever runs
    fsid = str(uuid.uuid4())
    sockets = ports.tcp_sockets()
    v2 = ports.free_port(sockets)
    v1 = ports.free_port(sockets, {v2}) if v2 else None
    if v2 is None or v1 is None:
        raise Failure("found no free port in %d-%d" % (ports.FIRST_PORT, ports.LAST_PORT))
    # ceph.conf first: from here on the directory holds a cluster, if an unfinished one.
    with open(cdir.conf, "w") as f:
        f.write(conf.render(cdir, fsid, v2, v1, osds, osd_size_gib))
    with open(cdir.osds_file, "w") as f:
        f.write("%d\n" % osds)
    for d in (cdir.run, cdir.logs, cdir.block, cdir.crash, cdir.join(MGR)):
        os.makedirs(d, exist_ok=True)
    check_direct_io(cdir.block)

    new_key(cdir.admin_keyring, "client.admin", ADMIN_CAPS)
    new_key(cdir.join(MGR, "keyring"), MGR, MGR_CAPS)
    new_key(cdir.mkfs_keyring, "mon.", MON_CAPS)
    import_key(cdir.mkfs_keyring, cdir.admin_keyring)
    import_key(cdir.mkfs_keyring, cdir.join(MGR, "keyring"))
    osd_uuids = []
    for i in range(osds):
        name = "osd.%d" % i
        os.makedirs(cdir.join(name), exist_ok=True)
        new_key(cdir.join(name, "keyring"), name, OSD_CAPS)
        import_key(cdir.mkfs_keyring, cdir.join(name, "keyring"))
        osd_uuids.append(str(uuid.uuid4()))

    # The OSDs' mkfs (the slow part) needs no mon: it runs while the mon is
    # made, starts and takes the commands.
    mkfs: list[subprocess.Popen] = []
    try:
        for i, osd_uuid in enumerate(osd_uuids):
            with open(cdir.output("osd.%d" % i), "ab") as out:
                mkfs.append(subprocess.Popen(
                    ["ceph-osd", "--mkfs", "-c", cdir.conf, "-i", str(i), "--osd-uuid", osd_uuid],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT))
        mon_id = MON.split(".", 1)[1]
        _run(["monmaptool", "--create", "--fsid", fsid, "--addv", mon_id,
              "[v2:127.0.0.1:%d,v1:127.0.0.1:%d]" % (v2, v1), cdir.monmap], "monmaptool")
        with open(cdir.output(MON), "ab") as out:
            made = subprocess.run(["ceph-mon", "--mkfs", "-c", cdir.conf, "-i", mon_id, "--monmap", cdir.monmap,
                                   "--keyring", cdir.mkfs_keyring],
                                  stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        if made.returncode != 0:
            raise Failure("ceph-mon --mkfs failed: " + log_end(cdir.output(MON)))
        os.unlink(cdir.monmap)
        os.unlink(cdir.mkfs_keyring)
        daemons.launch(MON)
        daemons.launch(MGR)
        cmds = [{"prefix": "osd new", "uuid": u, "id": i} for i, u in enumerate(osd_uuids)]
        cmds.append({"prefix": "osd pool create", "pool": POOL, "pg_num": pg_num, "pgp_num": pg_num})
        cmds.append({"prefix": "osd pool application enable", "pool": POOL, "app": POOL_APP})
        epoch = mon.commands(cmds)
        for i, child in enumerate(mkfs):
            if child.wait() != 0:
                raise Failure("ceph-osd --mkfs of osd.%d failed: %s" % (i, log_end(cdir.output("osd.%d" % i))))
    finally:
        for child in mkfs:  # a failure above: no mkfs outlives the tool
            if child.poll() is None:
                child.kill()
                child.wait()
    for i in range(osds):
        daemons.launch("osd.%d" % i)
    open(cdir.created_file, "w").close()
    return epoch
