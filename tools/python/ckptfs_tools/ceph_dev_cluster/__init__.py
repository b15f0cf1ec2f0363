"""tools/ceph-dev-cluster: a real Ceph cluster on this machine, all in one
directory, for tests and CI: 1 mon, 1 mgr and 1 to 3 bluestore OSDs on sparse
files, cephx on, bound to 127.0.0.1, with a pool named ckptfs.

Clients use it with CEPH_CONF=DIR/ceph.conf. No systemd: the daemons run in
the foreground mode (-f) as children of the tool, in a session of their own,
and stay running when it exits. Each daemon is found by its pid file
(DIR/run/NAME.pid) and checked by its command line (its binary,
-c DIR/ceph.conf, -i ID) before any signal; a scan of /proc for that command
line finds one whose pid file is missing. Ceph's src/vstart.sh was the
reference.

The parts:
    layout     what the directory holds, and which of it the cluster made
    conf       the ceph.conf a new cluster gets
    ports      TCP ports in use (/proc/net/tcp), a free one for the mon
    daemons    finding, launching and ending the daemons of a directory
    mon        the mon's side, through librados (run as a child process)
    mon_helper runs mon in a child process, once more if it crashes
    create     a new cluster: keys, the mon's and the OSDs' mkfs, the pool
    errors     failures, usage errors and messages
    settings   what the environment sets
    session    one run of a verb: its daemons, the directory's lock
    verbs      start, stop, osd-stop, osd-start, status, destroy
    cli        the command line, signals and exit statuses
"""
