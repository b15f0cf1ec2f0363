"""Unit tests of ckptfs_tools.bench_tier."""

import unittest

from ckptfs_tools import bench_tier

RESULTS = """rados_write_own 1.0
drain 0.95
drain_wait 0.9
rados_write 1.1
rados_write_seg 1.0
rados_seq 2.0
restore_read 1.8
restore_mmap 1.6
rados_write_own 2.0
drain 1.0
drain_wait 0.9
rados_write 1.1
rados_write_seg 1.0
rados_seq 2.0
restore_read 2.0
restore_mmap 1.6
"""


class BenchTierTest(unittest.TestCase):
    def test_results_parse_and_bad_lines_are_errors(self):
        rows = bench_tier.parse_results(RESULTS)
        self.assertEqual(rows["drain"], [0.95, 1.0])
        with self.assertRaises(ValueError):
            bench_tier.parse_results("drain\n")

    def test_report_rows_are_medians_of_per_round_ratios(self):
        text = bench_tier.report(bench_tier.parse_results(RESULTS), 2, 1_700_000_000, 32 << 20)
        # drain/rados_write_own: 0.95 and 0.5 -> 0.725
        self.assertIn("| drain vs rados bench write, 32 MiB objects (the drain's write size) | 0.72x", text)
        # restore_read/rados_seq: 0.9 and 1.0 -> 0.95
        self.assertIn("| restore from RADOS (read) vs rados bench seq | 0.95x (1.800/2.000 / 2.000/2.000 GB/s)", text)
        self.assertNotIn("burst", text.split("\n", 3)[3])

    def test_drain_rate_uses_its_own_clock(self):
        self.assertEqual(bench_tier.drain_rate({"uploaded_bytes": 2e9, "sending_ms": 1000}), 2.0)
        with self.assertRaises(ValueError):
            bench_tier.drain_rate({"uploaded_bytes": 2e9, "sending_ms": 0})

    def test_store_size(self):
        self.assertEqual(bench_tier.store_size_gib(1 << 30), 4)


if __name__ == "__main__":
    unittest.main()
