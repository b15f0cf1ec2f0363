"""Unit tests of ckptfs_tools.skips: reading skips from real report formats."""

import io
import json
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from ckptfs_tools import skips

# The shape ctest 3.25 writes with --output-junit: a skipped test carries
# status="notrun" and a <skipped> element; its output is in <system-out>.
JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-c++" tests="3" failures="0" disabled="0" skipped="1" hostname="" time="2" timestamp="2026-12-07T03:00:00">
  <testcase name="PosixOpsTest.Rename" classname="PosixOpsTest.Rename" time="0.5" status="run">
    <system-out>[ RUN      ] PosixOpsTest.Rename
[       OK ] PosixOpsTest.Rename (500 ms)</system-out>
  </testcase>
  <testcase name="PytorchTest.SaveLoad" classname="PytorchTest.SaveLoad" time="0.1" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>Note: Google Test filter = PytorchTest.SaveLoad
[ RUN      ] PytorchTest.SaveLoad
pytorch_test.cc:48: Skipped
/usr/bin/python3 (python3-torch) is required
[  SKIPPED ] PytorchTest.SaveLoad (0 ms)</system-out>
  </testcase>
  <testcase name="package_test" classname="package_test" time="0.0" status="run"/>
  <testcase name="BenchAll.Quick" classname="BenchAll.Quick" time="0.0" status="notrun">
    <skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>skipped: needs fio, fusermount3 and /dev/fuse
</system-out>
  </testcase>
</testsuite>
"""

GTEST_JSON = {
    "tests": 2, "failures": 0, "disabled": 0, "errors": 0, "name": "AllTests",
    "testsuites": [{
        "name": "UringChannelTest", "tests": 2,
        "testsuite": [
            {"name": "Mounts", "status": "RUN", "result": "COMPLETED", "classname": "UringChannelTest"},
            # GoogleTest 1.12's JSON: no message for a skip, only where.
            {"name": "FallsBack", "file": "uring_channel_test.cc", "line": 54, "status": "RUN",
             "result": "SKIPPED", "classname": "UringChannelTest"},
        ],
    }],
}


class ReportsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = Path(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, text):
        p = self.path / name
        p.write_text(text)
        return p

    def test_junit_skip_carries_the_tests_own_reason(self):
        found = skips.skips_in(self.write("ctest.xml", JUNIT))
        self.assertEqual([s.test for s in found], ["PytorchTest.SaveLoad", "BenchAll.Quick"])
        self.assertEqual(found[1].message, "skipped: needs fio, fusermount3 and /dev/fuse")
        self.assertEqual(found[0].message, "/usr/bin/python3 (python3-torch) is required")

    def test_gtest_json_skip(self):
        found = skips.skips_in(self.write("run.json", json.dumps(GTEST_JSON)))
        self.assertEqual([s.test for s in found], ["UringChannelTest.FallsBack"])
        self.assertEqual(found[0].message, "at uring_channel_test.cc:54")

    def test_a_directory_of_reports(self):
        d = self.path / "gtest"
        d.mkdir()
        (d / "fs_tests.json").write_text(json.dumps({"testsuites": []}))
        (d / "integration_tests_1.json").write_text(json.dumps(GTEST_JSON))
        (d / "notes.txt").write_text("not a report")
        self.assertEqual([s.test for s in skips.skips_in(d)], ["UringChannelTest.FallsBack"])

    def test_unreadable_reports_are_errors_not_empty(self):
        with self.assertRaises(skips.ReportError):
            skips.skips_in(self.write("bad.xml", "<testsuite"))
        with self.assertRaises(skips.ReportError):
            skips.skips_in(self.write("bad.json", "{}"))
        with self.assertRaises(skips.ReportError):
            skips.skips_in(self.write("run.txt", ""))
        with self.assertRaises(skips.ReportError):
            skips.skips_in(self.path / "missing.json")

    def run_main(self, allowed_text, *reports):
        allowed = self.write("allowed", allowed_text)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = skips.main(["--allowed", str(allowed), *map(str, reports)])
        return status, out.getvalue(), err.getvalue()

    def test_an_unlisted_skip_fails_and_is_named(self):
        status, _, err = self.run_main("# nothing allowed\n", self.write("ctest.xml", JUNIT))
        self.assertEqual(status, 1)
        self.assertIn("PytorchTest.SaveLoad", err)

    def test_a_listed_skip_passes_with_its_reason(self):
        status, out, _ = self.run_main("Pytorch*.*  torch is not packaged for this architecture\n"
                                       "BenchAll.*  no fio\n",
                                       self.write("ctest.xml", JUNIT),
                                       self.write("run.json", json.dumps({"testsuites": []})))
        self.assertEqual(status, 0)
        self.assertIn("torch is not packaged", out)

    def test_only_matching_patterns_allow(self):
        status, _, err = self.run_main("PytorchTest.*  reason\n", self.write("ctest.xml", JUNIT),
                                       self.write("run.json", json.dumps(GTEST_JSON)))
        self.assertEqual(status, 1)
        self.assertIn("UringChannelTest.FallsBack", err)
        self.assertNotIn("PytorchTest", err)

    def test_an_entry_without_a_reason_is_refused(self):
        with self.assertRaises(skips.ReportError):
            skips.parse_allowed("PytorchTest.*\n")
        status, _, err = self.run_main("PytorchTest.*   # no reason\n", self.write("ctest.xml", JUNIT))
        self.assertEqual(status, 2)
        self.assertIn("no reason", err)


if __name__ == "__main__":
    unittest.main()
