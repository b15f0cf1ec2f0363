"""The ceph.conf of a new dev cluster: everything in its directory, the mon on
127.0.0.1 at two fixed ports, a pool of min(2, OSDs) replicas on one host."""

from __future__ import annotations

import re

from ckptfs_tools.ceph_dev_cluster.layout import MARK, ClusterDir

_SECTION_PATHS = """\
{kind}data = {dir}/$name
keyring = {dir}/$name/keyring
log file = {logs}/$name.log
pid file = {run}/$name.pid
admin socket = {run}/$name.asok"""


def render(cdir: ClusterDir, fsid: str, v2_port: int, v1_port: int, osds: int, osd_size_gib: int) -> str:
    """The text of ceph.conf for a cluster of OSDS OSDs in CDIR."""

    def paths(kind: str) -> str:
        return _SECTION_PATHS.format(kind=kind + " ", dir=cdir.path, logs=cdir.logs, run=cdir.run)

    size = min(osds, 2)
    return f"""{MARK}
# made by tools/ceph-dev-cluster; clients: CEPH_CONF={cdir.conf}
[global]
fsid = {fsid}
mon host = [v2:127.0.0.1:{v2_port},v1:127.0.0.1:{v1_port}]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
run dir = {cdir.run}
crash dir = {cdir.crash}
# One host: replicas on distinct OSDs, a 1-OSD pool allowed, an OSD reported
# down by a single peer (else a hung OSD is noticed after 900 s).
osd crush chooseleaf type = 0
osd pool default size = {size}
osd pool default min size = 1
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
mon allow pool delete = true
mon osd reporter subtree level = osd
mon osd min down reporters = 1
# The mon's disk is the test machine's, often small or shared.
mon data avail warn = 2
mon data avail crit = 1
# The mgr loads only the modules it must (the always-on ones; more health
# checks, more memory, and slow to load: several seconds each on a busy host).
mgr initial modules = iostat
# OSDs report PG states to the mgr every second, not every 5 s, and the mgr
# sums them up every second: waits for HEALTH_OK end sooner.
mgr stats period = 1
mgr tick period = 1
mgr disabled modules = alerts cephadm dashboard diskprediction_local influx insights localpool mirroring nfs osd_support prometheus restful selftest snap_schedule stats rook k8sevents telegraf test_orchestrator zabbix

[mon]
{paths("mon")}
mon cluster log file = {cdir.logs}/cluster.log

[mgr]
{paths("mgr")}

[osd]
{paths("osd")}
osd objectstore = bluestore
# Outside the OSD's data directory, sparse, well above what tests write.
bluestore block path = {cdir.block}/$name.img
bluestore block create = true
bluestore block size = {osd_size_gib << 30}
osd memory target = 1073741824
# Recovery after an OSD comes back at full speed: the block files sit on a disk
# Ceph takes for a rotating one, which would sleep 0.1 s between recovery ops.
osd recovery sleep hdd = 0
osd recovery max active hdd = 8

[client]
keyring = {cdir.admin_keyring}
admin socket = {cdir.run}/$name.$pid.asok
"""


def mon_ports(conf_text: str) -> list[int]:
    """The ports of the mon host line of a ceph.conf."""
    ports: list[int] = []
    for line in conf_text.splitlines():
        if line.startswith("mon host"):
            ports += [int(p) for p in re.findall(r"\d+\.\d+\.\d+\.\d+:(\d+)", line)]
    return ports
