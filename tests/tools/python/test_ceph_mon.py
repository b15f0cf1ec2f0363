"""Unit tests of ckptfs_tools.ceph_dev_cluster.mon's reading of the cluster's state."""

import os
import tempfile
import unittest

from ckptfs_tools.ceph_dev_cluster import mon as ceph_mon

STATUS = {"health": {"status": "HEALTH_OK"}, "mgrmap": {"available": True},
          "osdmap": {"num_osds": 3, "num_up_osds": 3, "num_in_osds": 3}}
DUMP = {"epoch": 20, "osds": [{"osd": i, "up": 1, "up_from": 15} for i in range(3)]}
PGS = {"pg_ready": True, "pg_summary": {"num_pgs": 33, "num_pg_by_state": [{"name": "active+clean", "num": 33}]}}


class AssessTest(unittest.TestCase):
    def test_ready_when_healthy_all_up_booted_and_clean(self):
        seen = ceph_mon.assess(STATUS, DUMP, PGS, 3, 32, 10, [0, 1, 2])
        self.assertTrue(seen.ready, seen.state)
        self.assertEqual(seen.state, "HEALTH_OK, 3/3 osds up, 3 in, pgs: 33 active+clean")

    def test_an_osd_up_from_before_the_restart_has_not_booted(self):
        seen = ceph_mon.assess(STATUS, DUMP, PGS, 3, 32, 15, [1])
        self.assertFalse(seen.ready)
        self.assertIn("waiting for osd 1 to boot", seen.state)

    def test_pgs_not_all_clean_or_too_few(self):
        peering = {"pg_ready": True, "pg_summary": {"num_pgs": 33, "num_pg_by_state": [
            {"name": "active+clean", "num": 30}, {"name": "peering", "num": 3}]}}
        seen = ceph_mon.assess(STATUS, DUMP, peering, 3, 32, 10, [])
        self.assertFalse(seen.ready)
        self.assertIn("30 active+clean, 3 peering", seen.state)
        self.assertFalse(ceph_mon.assess(STATUS, DUMP, PGS, 3, 64, 10, []).ready)
        self.assertFalse(ceph_mon.assess(STATUS, DUMP, dict(PGS, pg_ready=False), 3, 32, 10, []).ready)

    def test_no_mgr_and_pre_pacific_nesting(self):
        seen = ceph_mon.assess(STATUS, DUMP, None, 3, 32, 10, [])
        self.assertFalse(seen.ready)
        self.assertIn("no answer from a mgr", seen.state)
        nested = dict(STATUS, osdmap={"osdmap": STATUS["osdmap"]})
        self.assertTrue(ceph_mon.assess(nested, DUMP, PGS, 3, 32, 10, []).ready)

    def test_health_warn_or_an_osd_down(self):
        self.assertFalse(ceph_mon.assess(dict(STATUS, health={"status": "HEALTH_WARN"}), DUMP, PGS, 3, 32, 10,
                                         []).ready)
        down = dict(STATUS, osdmap={"num_osds": 3, "num_up_osds": 2, "num_in_osds": 3})
        self.assertFalse(ceph_mon.assess(down, DUMP, PGS, 3, 32, 10, []).ready)


class ExitedDaemonTest(unittest.TestCase):
    def test_gone_and_zombie_daemons_are_found(self):
        with tempfile.TemporaryDirectory() as proc:
            for pid, state in (("10", "S"), ("11", "Z")):
                os.mkdir(os.path.join(proc, pid))
                with open(os.path.join(proc, pid, "stat"), "w") as f:
                    f.write(f"{pid} (ceph-osd (x)) {state} 1 1")
            self.assertIsNone(ceph_mon.exited_daemon("osd.0:10", proc))
            self.assertEqual(ceph_mon.exited_daemon("osd.0:10 osd.1:11", proc), ("osd.1", "11"))
            self.assertEqual(ceph_mon.exited_daemon("mon.a:12", proc), ("mon.a", "12"))
            self.assertIsNone(ceph_mon.exited_daemon("", proc))


if __name__ == "__main__":
    unittest.main()
