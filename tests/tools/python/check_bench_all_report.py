"""Checks tools/bench-all's JSON report from a --quick run (bench_all_quick_test.sh).

Every target has a row and each was measured (n/a means a step failed); a
missed target says by how much; the fill passes ran and the chart exists;
the report names the channel the mount's requests came through.
Exit 0 when all holds, 1 naming what does not.
"""

import json
import sys


def problems(report: dict) -> list[str]:
    targets = report["targets"]
    found = []
    unmeasured = [t["target"] for t in targets if t["result"] == "n/a"]
    if len(targets) < 28 or unmeasured:
        found.append("%d targets, unmeasured: %s" % (len(targets), unmeasured))
    # A missed target says by how much (the factor its ratio would need).
    vague = [t["target"] for t in targets if t["result"] == "missed" and "needs" not in t.get("missed_by", "")
             and t["threshold"] > 0]
    if vague:
        found.append("missed targets without the factor they miss by: %s" % vague)
    if report["config"].get("channel") not in ("io_uring", "dev_fuse"):
        found.append("the channel is not recorded: %r" % report["config"].get("channel"))
    if not report["fill"].get("passes") or report["chart"] is None:
        found.append("no fill passes or no chart: %s" % report["fill"])
    return found


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        found = problems(json.load(f))
    for p in found:
        print("FAIL: " + p)
    sys.exit(1 if found else 0)
