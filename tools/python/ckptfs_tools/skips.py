"""Which tests were skipped in a run, and whether each skip is allowed.

CI must not pass with a test that quietly did not run (a missing package, a
missing privilege): every skip it meets fails the run unless the skip is
listed, with its reason, in tests/allowed-skips.

Reads the reports a run leaves: ctest's JUnit XML (`ctest --output-junit`)
and GoogleTest's JSON (`--gtest_output=json:`). The allowed list has one
entry a line, `PATTERN  REASON`: PATTERN is an fnmatch pattern of a test's
name (`Suite.Test`, as ctest and GoogleTest name it), REASON the why, which
may not be empty; `#` starts a comment.

    python3 -m ckptfs_tools.skips --allowed tests/allowed-skips REPORT|DIR...

Exit status: 0 when every skip is allowed, 1 when one is not (each is
named), 2 when a report or the list cannot be read.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path


class ReportError(Exception):
    """A report or the allowed list could not be read."""


@dataclass(frozen=True)
class Skip:
    test: str     # Suite.Test
    report: str   # the file it came from
    message: str  # what the test said when it skipped


@dataclass(frozen=True)
class AllowedSkip:
    pattern: str
    reason: str


def skips_in_junit(path: Path) -> list[Skip]:
    """The skipped test cases of a JUnit XML file (ctest --output-junit)."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as e:
        raise ReportError(f"{path}: not a JUnit XML report: {e}") from e
    found = []
    for case in root.iter("testcase"):
        skipped = case.find("skipped")
        if skipped is None and case.get("status") not in ("notrun", "disabled"):
            continue
        message = skipped.get("message", "") if skipped is not None else case.get("status", "")
        found.append(Skip(case.get("name", "?"), str(path),
                           skip_reason(case.findtext("system-out") or "") or message))
    return found


def skip_reason(output: str) -> str:
    """The reason a test gave for skipping, from its output (ctest keeps it in
    the JUnit file): GoogleTest prints it on the line after "FILE:LINE:
    Skipped"; the scripts print a line that starts with "skipped"."""
    lines = [line.strip() for line in output.splitlines()]
    for i, line in enumerate(lines):
        if line.endswith(": Skipped") and i + 1 < len(lines) and lines[i + 1]:
            return lines[i + 1]
    return next((line for line in lines if line.lower().startswith("skipped")), "")


def skips_in_gtest_json(path: Path) -> list[Skip]:
    """The skipped tests of a GoogleTest JSON report (--gtest_output=json:)."""
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ReportError(f"{path}: not a GoogleTest JSON report: {e}") from e
    if not isinstance(report, dict) or "testsuites" not in report:
        raise ReportError(f"{path}: not a GoogleTest JSON report: no testsuites")
    found = []
    for suite in report["testsuites"]:
        for test in suite.get("testsuite", []):
            if test.get("result") != "SKIPPED":
                continue
            # GoogleTest 1.12 keeps no skip message in JSON: where it skipped.
            message = " ".join(f.get("failure", "") for f in test.get("failures", [])).strip() or \
                "at %s:%s" % (test.get("file", "?"), test.get("line", "?"))
            found.append(Skip(f"{suite['name']}.{test['name']}", str(path), message))
    return found


def skips_in(path: Path) -> list[Skip]:
    """The skips of one report, by its kind (.xml JUnit, .json GoogleTest), or
    of every report in a directory (GTEST_OUTPUT=json:DIR/ leaves one a process)."""
    if path.is_dir():
        return [s for p in sorted(path.iterdir()) if p.suffix in (".xml", ".json") for s in skips_in(p)]
    if path.suffix == ".xml":
        return skips_in_junit(path)
    if path.suffix == ".json":
        return skips_in_gtest_json(path)
    raise ReportError(f"{path}: unknown report kind (expected .xml from ctest or .json from GoogleTest)")


def parse_allowed(text: str, source: str = "allowed list") -> list[AllowedSkip]:
    """The entries of an allowed-skips list; a pattern without a reason is an error."""
    allowed = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 1)
        if len(parts) < 2:
            raise ReportError(f"{source}:{number}: '{parts[0]}' has no reason; each entry is PATTERN REASON")
        allowed.append(AllowedSkip(parts[0], parts[1].strip()))
    return allowed


def allowing(skip: Skip, allowed: list[AllowedSkip]) -> AllowedSkip | None:
    """The first entry of the list that allows this skip, or None."""
    return next((a for a in allowed if fnmatch.fnmatchcase(skip.test, a.pattern)), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m ckptfs_tools.skips",
        description="Fails when a test run skipped a test that tests/allowed-skips does not list.")
    parser.add_argument("--allowed", type=Path, required=True, help="the allowed-skips list")
    parser.add_argument("reports", type=Path, nargs="+",
                        help="ctest JUnit .xml or GoogleTest .json reports, or directories of them")
    args = parser.parse_args(argv)
    try:
        allowed = parse_allowed(args.allowed.read_text(), str(args.allowed))
        skips = [s for report in args.reports for s in skips_in(report)]
    except (OSError, ReportError) as e:
        print(f"skips: {e}", file=sys.stderr)
        return 2
    unlisted = 0
    for skip in skips:
        entry = allowing(skip, allowed)
        if entry:
            print(f"skipped, allowed: {skip.test} ({entry.reason})")
        else:
            unlisted += 1
            print(f"skipped, NOT allowed: {skip.test} in {skip.report}: {skip.message or 'no reason given'}",
                  file=sys.stderr)
    if unlisted:
        print(f"skips: {unlisted} test(s) skipped that {args.allowed} does not list; "
              "install what they need (tools/install-deps.sh) or list them with the reason",
              file=sys.stderr)
        return 1
    print(f"skips: {len(skips)} skipped, all listed in {args.allowed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
