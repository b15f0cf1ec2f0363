"""Unit tests of ckptfs_tools.results: docs/results.md from the benchmarks' JSON."""

import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr

from ckptfs_tools import bench_all, bench_tier, results

MACHINE = {"cpus": 2, "cpu_model": "AMD EPYC", "memory_bytes": 24 << 30, "kernel": "6.18.44",
           "filesystem": {"source": "/dev/vda", "fstype": "ext4"}}


def bench_all_report():
    targets = [bench_all.target_row(f"target {i}", 1.0 + i / 100, ">=", 1.0 if i % 2 else 1.5) for i in range(30)]
    medians = {key: 1.25 for _, p, c in bench_all.MEDIANS for key in (p, c) if key}
    return {"config": {"rounds": 2, "date": "2026-12-07T04:00:00Z", "command": "tools/bench-all --plain /x",
                       "machine": MACHINE, "cpu_counted": "own CPU", "quick": False},
            "targets": targets, "medians": medians}


def bench_tier_report():
    rows = bench_tier.parse_results("drain 1.0\nrados_write_own 1.0\ndrain_wait 0.9\nrados_write 1.0\n"
                                    "rados_write_seg 1.0\nrestore_read 0.85\nrestore_mmap 0.8\nrados_seq 1.0\n")
    return {"config": {"rounds": 1, "checkpoint_bytes": 1.7e9, "drain_bytes": 2 << 20, "date": "2026-12-07",
                       "command": "tools/bench-tier --store-dir /s", "machine": MACHINE},
            "targets": bench_tier.targets(rows, 2 << 20)}


class ResultsTest(unittest.TestCase):
    def test_the_page_from_both_reports(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "results"))
            paths = {}
            for name, report in (("bench-all", bench_all_report()), ("bench-tier", bench_tier_report())):
                paths[name] = os.path.join(d, "results", name + ".json")
                with open(paths[name], "w") as f:
                    json.dump(report, f)
            out = os.path.join(d, "results.md")
            with redirect_stderr(io.StringIO()):
                status = results.main(["--bench-all", paths["bench-all"], "--bench-tier", paths["bench-tier"],
                                       "--out", out])
            self.assertEqual(status, 0)
            with open(out) as f:
                text = f.read()
        lines = text.splitlines()
        self.assertLessEqual(len(lines), 150)
        self.assertIn("- Run: 2026-12-07T04:00:00Z, on 2 CPUs (AMD EPYC), 24 GiB, kernel 6.18.44; ext4 on /dev/vda.",
                      lines)
        self.assertIn("- Command: `tools/bench-all --plain /x`", lines)
        self.assertIn("15 of 30 targets met", text)
        self.assertIn("Data: `results/bench-all.json`", text)
        # A missed row says by how much.
        self.assertIn("| target 0 | 1.00x | ≥ 1.50x | missed | 33% short (needs ×1.50) |", lines)
        self.assertIn("| 405B restore, read() | 1.250 | 1.250 |", lines)
        # The tier's restore misses 0.90x at 0.85x.
        self.assertTrue(any(l.startswith("| restore from RADOS (read) vs rados bench seq | 0.85x") and "missed" in l
                            for l in lines), text)

    def test_without_bench_tier_the_page_says_so(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bench-all.json")
            with open(path, "w") as f:
                json.dump(bench_all_report(), f)
            out = os.path.join(d, "results.md")
            with redirect_stderr(io.StringIO()):
                self.assertEqual(results.main(["--bench-all", path, "--out", out]), 0)
            with open(out) as f:
                text = f.read()
        self.assertIn("No bench-tier run is recorded here yet", text)

    def test_a_bad_report_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bench-all.json")
            with open(bad, "w") as f:
                f.write("{}")
            with redirect_stderr(io.StringIO()) as err:
                status = results.main(["--bench-all", bad, "--out", os.path.join(d, "r.md")])
            self.assertEqual(status, 1)
            self.assertIn("cannot read", err.getvalue())
            self.assertFalse(os.path.exists(os.path.join(d, "r.md")))


if __name__ == "__main__":
    unittest.main()
