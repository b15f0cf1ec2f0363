"""Unit tests of ckptfs_tools.json_field and replay_report, and of the
checks the quick benchmark tests run on their reports."""

import unittest

import check_bench_all_report
import check_bench_compress_report
from ckptfs_tools import json_field, replay_report


class JsonFieldTest(unittest.TestCase):
    def test_nested_fields_and_missing_keys(self):
        doc = {"store": {"segment_size": 33554432, "name": "a"}}
        self.assertEqual(json_field.field(doc, "store.segment_size"), 33554432)
        with self.assertRaises(KeyError):
            json_field.field(doc, "store.nope")
        with self.assertRaises(KeyError):
            json_field.field(doc, "store.name.deeper")


class ReplayReportTest(unittest.TestCase):
    def test_phases_of_a_kind_are_summed(self):
        report = {"phases": [{"kind": "write", "bytes": 3e9, "seconds": 1.0, "files": 2},
                             {"kind": "restore", "bytes": 1e9, "seconds": 1.0, "files": 2},
                             {"kind": "write", "bytes": 1e9, "seconds": 1.0, "files": 3}]}
        got = replay_report.phases_of(report, "write")
        self.assertEqual((got.bytes, got.seconds, got.files, got.gb_per_s), (4e9, 2.0, 5, 2.0))
        self.assertIsNone(replay_report.phases_of(report, "scrub").gb_per_s)


class ReportChecksTest(unittest.TestCase):
    def test_bench_all_report(self):
        good = {"targets": [{"target": f"t{i}", "result": "met", "threshold": 1.0} for i in range(28)],
                "fill": {"passes": {"1": 1.0}}, "chart": "r.png", "config": {"channel": "io_uring"}}
        self.assertEqual(check_bench_all_report.problems(good), [])
        bad = dict(good, targets=good["targets"][:27] + [{"target": "x", "result": "missed", "threshold": 1.0,
                                                          "missed_by": "a bit"}], chart=None,
                   config={"channel": "unknown"})
        self.assertEqual(len(check_bench_all_report.problems(bad)), 3)

    def test_bench_compress_report(self):
        rows = ["| none | 1 | 1 | 1 | 1 | 1.000 | 0% | 0 | 1 |"] + [
            f"| {m} | 1 | 1 | 1 | 1 | 1.400 | 0% | 0 | 1 |"
            for m in ("zstd:-3", "zstd:1", "zstd:-3+compress_backlog=raw", "zstd:-3+compress_when=idle")]
        self.assertEqual(check_bench_compress_report.problems("\n".join(rows)), [])
        self.assertTrue(check_bench_compress_report.problems("\n".join(rows[:-1])))
        self.assertTrue(check_bench_compress_report.problems("\n".join(rows).replace("1.400", "1.100")))


if __name__ == "__main__":
    unittest.main()
