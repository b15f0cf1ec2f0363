"""Unit tests of ckptfs_tools.bench_compress and bench_compare."""

import unittest

from ckptfs_tools import bench_compare, bench_compress


def replay(write_bytes, write_s, restore_bytes=0, restore_s=0.0):
    phases = [{"kind": "write", "bytes": write_bytes, "seconds": write_s, "files": 8}]
    if restore_bytes:
        phases.append({"kind": "restore", "bytes": restore_bytes, "seconds": restore_s, "files": 8})
    return {"phases": phases}


class BenchCompressTest(unittest.TestCase):
    def test_a_mode_round(self):
        stats = {"store": {"live_file_bytes": 3 << 30, "live_bytes": 2 << 30, "compressed_runs": 6,
                           "compress_raw_runs": 1, "compress_skipped_runs": 3}}
        r = bench_compress.mode_round(replay(2 << 30, 2.0, 2 << 30, 1.0), 200, 100, 7, stats)
        self.assertAlmostEqual(r.write_gbps, (2 << 30) / 2e9)
        self.assertEqual(r.cpu_s_per_gib, 1.0)
        self.assertEqual(r.stored_ratio, 1.5)
        self.assertEqual(r.skipped_share, 0.3)

    def test_burst_table_against_the_first_mode(self):
        none = bench_compress.ModeRound(1.0, 2.0, 1.0, 1.0, 0.0, 0, 10**9)
        zstd = bench_compress.ModeRound(0.8, 2.2, 2.0, 1.4, 0.0, 0, 10**9)
        rows = bench_compress.burst_table({"none": [none], "zstd:-3": [zstd]}, 0.0003, 1, "bf16", 1)
        self.assertIn("| zstd:-3 | 0.800 | 0.80 | 2.200 | 1.10 | 1.400 | 0% | 0 | 2.00 |", rows)

    def test_codec_table_takes_the_better_grouping(self):
        codec = [{"kind": "bf16", "input": "/d/w.bin", "level": -3, "mode": m, "ratio": r, "encode_mbps": 900}
                 for m, r in (("zstd", 1.1), ("group2", 1.45), ("group4", 1.3), ("auto", 1.45))]
        self.assertIn("| bf16 | w.bin | -3 | 1.100 | 1.450 | 1.450 | 900 |", bench_compress.codec_table(codec))


class BenchCompareTest(unittest.TestCase):
    def test_side_figures_are_medians(self):
        w, r, cpu, per_ckpt = bench_compare.side_figures(
            [(replay(4e9, 2.0, 4e9, 1.0), 100), (replay(4e9, 4.0, 4e9, 4.0), 300)], 100)
        self.assertEqual((w, r, per_ckpt), (1.5, 2.5, 4e9))
        self.assertAlmostEqual(cpu, 2.0 / (8e9 / 2**30))

    def test_table_ratios(self):
        text = bench_compare.table((1.0, 2.0, 1.0, 1e9), (1.5, 1.0, 0.5, 1e9), "llama3-405b", 0.0003, 3, 2, "own")
        self.assertIn("| checkpoint write GB/s | 1.000 | 1.500 | 1.50 |", text)
        self.assertIn("| CPU s per GiB moved (own) | 1.00 | 0.50 | 0.50 |", text)


if __name__ == "__main__":
    unittest.main()
