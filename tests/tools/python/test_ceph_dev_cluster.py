"""Unit tests of tools/ceph-dev-cluster's parts that need no cluster: its
ceph.conf, the ports it picks, how it recognises its daemons, what it counts
as its own in a directory, its settings, lock and usage errors. The real
cluster's start, stop, restart and OSD kill are tests/tools/ceph_dev_cluster_test.sh."""

import configparser
import io
import os
import random
import signal
import tempfile
import unittest
from contextlib import redirect_stderr

from ckptfs_tools.ceph_dev_cluster import cli, conf, ports
from ckptfs_tools.ceph_dev_cluster.daemons import Daemons, daemon_of_argv
from ckptfs_tools.ceph_dev_cluster.errors import Failure, UsageError
from ckptfs_tools.ceph_dev_cluster.layout import MARK, ClusterDir, tail
from ckptfs_tools.ceph_dev_cluster.session import Session
from ckptfs_tools.ceph_dev_cluster.settings import Settings


def parse_conf(text):
    parser = configparser.ConfigParser(interpolation=None, comment_prefixes=("#",))
    parser.read_string(text)
    return parser


class ConfTest(unittest.TestCase):
    def setUp(self):
        self.cdir = ClusterDir("/srv/c")

    def test_replicas_are_min_of_two_and_the_osds(self):
        for osds, size in ((1, "1"), (2, "2"), (3, "2")):
            text = conf.render(self.cdir, "f", 20001, 20002, osds, 16)
            self.assertEqual(parse_conf(text)["global"]["osd pool default size"], size)

    def test_the_mark_comes_first_and_everything_stays_in_the_directory(self):
        text = conf.render(self.cdir, "fsid-1", 20001, 20002, 3, 2)
        self.assertEqual(text.splitlines()[0], MARK)
        c = parse_conf(text)
        self.assertEqual(c["global"]["fsid"], "fsid-1")
        self.assertEqual(c["global"]["mon host"], "[v2:127.0.0.1:20001,v1:127.0.0.1:20002]")
        self.assertEqual(c["osd"]["bluestore block size"], str(2 << 30))
        self.assertEqual(c["osd"]["bluestore block path"], "/srv/c/block/$name.img")
        self.assertEqual(c["client"]["keyring"], "/srv/c/client.admin.keyring")
        for section in ("mon", "mgr", "osd"):
            for key in ("keyring", "log file", "pid file", "admin socket"):
                self.assertTrue(c[section][key].startswith("/srv/c/"), (section, key))
            self.assertEqual(c[section][section + " data"], "/srv/c/$name")

    def test_mon_ports_read_back(self):
        self.assertEqual(conf.mon_ports(conf.render(self.cdir, "f", 21000, 22000, 1, 1)), [21000, 22000])
        self.assertEqual(conf.mon_ports("[global]\nfsid = x\n"), [])


TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:4E21 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
   1: 0100007F:4E22 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2 1
"""


class PortsTest(unittest.TestCase):
    def test_parse_and_listening(self):
        sockets = ports.parse_tcp_table(TCP)
        self.assertEqual(sockets, [ports.Socket(20001, "0A"), ports.Socket(20002, "01")])
        self.assertTrue(ports.listening(20001, sockets))
        self.assertFalse(ports.listening(20002, sockets))  # connected from, not listening
        self.assertFalse(ports.listening(20003, sockets))

    def test_free_port_avoids_used_and_excluded_ports(self):
        sockets = [ports.Socket(p, "0A") for p in range(ports.FIRST_PORT, ports.LAST_PORT - 1)]
        free = {ports.free_port(sockets, rng=random.Random(seed)) for seed in range(20)}
        self.assertEqual(free, {ports.LAST_PORT - 1, ports.LAST_PORT})
        self.assertEqual(ports.free_port(sockets, {ports.LAST_PORT - 1}, random.Random(1)), ports.LAST_PORT)

    def test_no_free_port(self):
        every = [ports.Socket(p, "01") for p in range(ports.FIRST_PORT, ports.LAST_PORT + 1)]
        self.assertIsNone(ports.free_port(every, rng=random.Random(3)))


class FakeProc:
    """A /proc with the command lines the test gives."""

    def __init__(self, root):
        self.root = os.path.join(root, "proc")
        os.makedirs(self.root)

    def add(self, pid, argv):
        os.makedirs(os.path.join(self.root, str(pid)))
        with open(os.path.join(self.root, str(pid), "cmdline"), "wb") as f:
            f.write(b"".join(a.encode() + b"\0" for a in argv))


class DaemonsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cdir = ClusterDir(os.path.join(self.tmp.name, "c"))
        os.makedirs(self.cdir.run)
        self.proc = FakeProc(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_daemon_of_argv(self):
        c = self.cdir.conf
        self.assertEqual(daemon_of_argv(["/usr/bin/ceph-osd", "-f", "-c", c, "-i", "2"], c), "osd.2")
        self.assertEqual(daemon_of_argv(["ceph-mon", "-i", "a", "-c", c], c), "mon.a")
        self.assertIsNone(daemon_of_argv(["ceph-osd", "-f", "-c", "/other/ceph.conf", "-i", "2"], c))
        self.assertIsNone(daemon_of_argv(["ceph-osd", "--mkfs", "-c", c], c))  # no -i
        self.assertIsNone(daemon_of_argv(["rados", "-c", c, "-i", "2"], c))
        self.assertIsNone(daemon_of_argv([], c))

    def write_pid(self, name, pid):
        with open(self.cdir.pid_file(name), "w") as f:
            f.write("%d\n" % pid)

    def test_running_trusts_a_pid_file_only_with_its_command_line(self):
        c = self.cdir.conf
        self.proc.add(101, ["ceph-mon", "-f", "-c", c, "-i", "a"])
        self.proc.add(102, ["sleep", "100"])  # a pid file's pid reused by another process
        self.proc.add(103, ["ceph-osd", "-f", "-c", c, "-i", "0"])  # no pid file
        self.proc.add(104, ["ceph-osd", "-f", "-c", "/elsewhere/ceph.conf", "-i", "0"])
        self.write_pid("mon.a", 101)
        self.write_pid("mgr.x", 102)
        self.write_pid("osd.1", 999)  # gone
        daemons = Daemons(self.cdir, 1, proc=self.proc.root)
        self.assertEqual(daemons.running(), [("mon.a", 101), ("osd.0", 103)])
        self.assertEqual(daemons.pid_of("osd.0"), 103)
        self.assertIsNone(daemons.pid_of("mgr.x"))
        self.assertTrue(daemons.is_gone(999, "osd.1"))
        self.assertTrue(daemons.is_gone(101, "osd.0"))
        self.assertFalse(daemons.is_gone(101, "mon.a"))


class LayoutTest(unittest.TestCase):
    def test_only_what_the_cluster_made_is_its_own(self):
        with tempfile.TemporaryDirectory() as tmp:
            cdir = ClusterDir(tmp)
            self.assertFalse(cdir.holds_cluster())
            self.assertEqual(cdir.made_paths(), [])
            with open(cdir.join("tests.log"), "w"):
                pass
            os.makedirs(cdir.join("osd.1"))
            os.makedirs(cdir.join("osd.notes"))
            with open(cdir.conf, "w") as f:
                f.write(MARK + "\n[global]\n")
            with open(cdir.osds_file, "w") as f:
                f.write("2\n")
            self.assertTrue(cdir.holds_cluster())
            self.assertEqual(cdir.names(), ["mon.a", "mgr.x", "osd.0", "osd.1"])
            self.assertEqual(cdir.made_paths(), [cdir.conf, cdir.osds_file, cdir.join("osd.1")])
            with open(cdir.conf, "w") as f:
                f.write("[global]\n")  # a ceph.conf of another making
            self.assertFalse(cdir.holds_cluster())
            with open(cdir.conf, "wb") as f:
                f.write(b"\xff\xfe not text\n")
            self.assertFalse(cdir.holds_cluster())

    def test_tail_keeps_the_last_non_blank_lines(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "a.log")
            with open(path, "w") as f:
                f.write("one\n\ntwo\n  \nthree\n")
            self.assertEqual(tail(path, 2), ["two", "three"])
            self.assertEqual(tail(path, 9), ["one", "two", "three"])
            self.assertEqual(tail(os.path.join(tmp, "none.log"), 3), [])

    def test_empty_dir_is_a_usage_error(self):
        with self.assertRaises(UsageError):
            ClusterDir("")


class SettingsTest(unittest.TestCase):
    def test_defaults_and_checks(self):
        s = Settings.from_env({}, "start")
        self.assertEqual((s.timeout, s.stop_timeout, s.osd_size_gib, s.pg_num), (120, 20, 16, 32))
        self.assertIsNone(s.osds_of_new_cluster(None))
        for env in ({"CEPH_DEV_TIMEOUT": "0"}, {"CEPH_DEV_PG_NUM": "x"}, {"CEPH_DEV_STOP_TIMEOUT": "-1"},
                    {"CEPH_DEV_TIMEOUT": "\u00b2"}, {"CEPH_DEV_OSD_SIZE": "08"}):
            with self.assertRaises(UsageError, msg=env):
                Settings.from_env(env, "start")

    def test_an_empty_variable_is_unset(self):
        s = Settings.from_env({"CEPH_DEV_TIMEOUT": "", "CEPH_DEV_STOP_TIMEOUT": "", "CEPH_DEV_OSDS": ""}, "start")
        self.assertEqual((s.timeout, s.stop_timeout, s.osds_of_new_cluster(None)), (120, 20, None))

    def test_the_osd_count_of_a_new_cluster(self):
        s = Settings.from_env({"CEPH_DEV_OSDS": "3"}, "start")
        self.assertEqual(s.osds_of_new_cluster(None), 3)
        self.assertEqual(s.osds_of_new_cluster("2"), 2)  # --osds wins, and the variable is not looked at
        self.assertEqual(Settings.from_env({"CEPH_DEV_OSDS": "4"}, "start").osds_of_new_cluster("1"), 1)
        for env, arg in (({"CEPH_DEV_OSDS": "4"}, None), ({}, "4"), ({}, "0"), ({}, "two")):
            with self.assertRaises(UsageError, msg=(env, arg)):
                Settings.from_env(env, "start").osds_of_new_cluster(arg)

    def test_a_verb_does_not_check_what_it_does_not_use(self):
        s = Settings.from_env({"CEPH_DEV_PG_NUM": "x", "CEPH_DEV_OSDS": "9", "CEPH_DEV_OSD_SIZE": "x"}, "stop")
        self.assertEqual(s.pg_num, 32)
        Settings.from_env({"CEPH_DEV_OSD_SIZE": "x"}, "osd-start")
        with self.assertRaises(UsageError):
            Settings.from_env({"CEPH_DEV_STOP_TIMEOUT": "soon"}, "stop")


class LockTest(unittest.TestCase):
    def test_one_verb_at_a_time_and_a_stop_goes_on(self):
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings.from_env({}, "stop")
            first = Session(ClusterDir(tmp), settings)
            first.lock()
            second = Session(ClusterDir(tmp), settings)
            with self.assertRaisesRegex(Failure, "busy"):
                second.lock(wait_s=0.3)
            with redirect_stderr(io.StringIO()) as err:
                second.lock(proceed=True, wait_s=0.3)
            self.assertIn("going on without the lock", err.getvalue())


class CommandLineTest(unittest.TestCase):
    def run_main(self, argv, env=None):
        saved = dict(os.environ)
        os.environ.update(env or {})
        try:
            with redirect_stderr(io.StringIO()) as err:
                status = cli.main(argv)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        return status, err.getvalue()

    def test_the_signal_handlers_are_put_back(self):
        before = signal.getsignal(signal.SIGTERM)
        with tempfile.TemporaryDirectory() as tmp:
            self.run_main(["stop", tmp])
        self.assertIs(signal.getsignal(signal.SIGTERM), before)

    def test_usage_errors_exit_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            for argv in ([], ["start"], ["begin", tmp], ["start", tmp, "--osds", "4"], ["start", tmp, "--osds", "0"],
                         ["stop", tmp, "--osds", "2"], ["osd-start", tmp], ["status", tmp, "--kill"],
                         ["osd-stop", tmp, "0", "--kill", "--clean"], ["start", tmp, "--os", "2"],
                         ["--osds", "2", "start", tmp]):
                status, err = self.run_main(argv)
                self.assertEqual(status, 2, (argv, err))
                self.assertIn("--help", err)
            self.assertEqual(os.listdir(tmp), [])  # nothing was made

    def test_verbs_on_a_directory_without_a_cluster(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "notes.txt"), "w"):
                pass
            self.assertEqual(self.run_main(["status", tmp])[0], 1)
            self.assertEqual(self.run_main(["osd-stop", tmp, "0"])[0], 1)
            self.assertEqual(self.run_main(["osd-stop", tmp, "\u00b2"])[0], 1)
            self.assertEqual(self.run_main(["stop", tmp])[0], 0)  # nothing runs: a stop has nothing to do
            status, err = self.run_main(["destroy", tmp])
            self.assertEqual(status, 1)
            self.assertIn("holds no cluster", err)
            self.assertEqual(os.listdir(tmp), ["notes.txt"])

    def test_destroy_removes_what_the_cluster_made_and_keeps_the_rest(self):
        with tempfile.TemporaryDirectory() as tmp:
            cdir = ClusterDir(os.path.join(tmp, "c"))
            for d in (cdir.run, cdir.logs, cdir.join("osd.0"), cdir.join("mon.a")):
                os.makedirs(d)
            with open(cdir.conf, "w") as f:
                f.write(conf.render(cdir, "f", 20001, 20002, 1, 1))
            with open(cdir.join("tests.log"), "w"):
                pass
            with open(cdir.join("keep.txt"), "w"):
                pass
            status, err = self.run_main(["destroy", cdir.path])
            self.assertEqual(status, 0, err)
            self.assertEqual(sorted(os.listdir(cdir.path)), ["keep.txt", "tests.log"])
            os.unlink(cdir.join("keep.txt"))
            with open(cdir.conf, "w") as f:
                f.write(conf.render(cdir, "f", 20001, 20002, 1, 1))
            self.assertEqual(self.run_main(["destroy", cdir.path])[0], 0)
            self.assertFalse(os.path.exists(cdir.path))  # only logs were left beside it

    def test_start_refuses_a_directory_with_a_foreign_cluster_layout(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "mon.a"))
            status, err = self.run_main(["start", tmp])
            self.assertEqual(status, 1)
            self.assertIn("but no cluster", err)
            self.assertEqual(os.listdir(tmp), ["mon.a"])


if __name__ == "__main__":
    unittest.main()
