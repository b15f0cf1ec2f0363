"""Unit tests of ckptfs_tools.fio_compare."""

import json
import unittest

from ckptfs_tools import fio_compare


def fio_json(write_bw, iops=100.0, error=0):
    job = {"error": error, "read": {"bw_bytes": 0, "iops": 0.0}, "write": {"bw_bytes": write_bw, "iops": iops}}
    return json.dumps({"jobs": [job, job]})


class FioCompareTest(unittest.TestCase):
    def test_a_run_sums_its_jobs(self):
        self.assertEqual(fio_compare.measure(fio_json(1e9), "", 0), (2000.0, 200.0, None))

    def test_warnings_before_the_json_are_skipped(self):
        self.assertEqual(fio_compare.measure("fio: warning\n" + fio_json(1e9), "", 0)[0], 2000.0)

    def test_failures_carry_fio_s_reason(self):
        self.assertEqual(fio_compare.measure(fio_json(1e9, error=5), "", 0), (None, None, "fio error 5"))
        got = fio_compare.measure(None, "fio: pid=1, err=28/file:io_u.c: No space left on device\n", 1)
        self.assertEqual(got[2], "fio exit status 1: fio: pid=1, err=28/file:io_u.c: No space left on device")

    def test_a_side_with_a_failed_run_is_not_a_figure(self):
        rows = fio_compare.compare({"c": {"plain": [(100.0, 1, None), (300.0, 3, None)],
                                          "ckptfs": [(200.0, 2, None), (None, None, "fio error 5")]}}, ["c"])
        self.assertEqual(rows[0]["plain"]["mb_per_s"], 200.0)
        self.assertIsNone(rows[0]["ckptfs"]["mb_per_s"])
        self.assertEqual(rows[0]["ckptfs"]["error"], "fio error 5")
        self.assertIsNone(rows[0]["ratio"])
        rows = fio_compare.compare({"c": {"plain": [(100.0, 1, None)], "ckptfs": [(150.0, 2, None)]}}, ["c"])
        self.assertEqual(rows[0]["ratio"], 1.5)


if __name__ == "__main__":
    unittest.main()
