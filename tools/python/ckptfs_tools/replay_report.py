"""Reading what ckpt-replay reports: its --json file and its --plan.

    python3 -m ckptfs_tools.replay_report rate FILE KIND     GB/s of the phases of KIND
    python3 -m ckptfs_tools.replay_report plan-bytes REPLAY ARGS...
                                                            bytes one run of ARGS writes
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

from .figures import gb_per_s


@dataclass(frozen=True)
class Phases:
    """The phases of one kind (write, restore) of a replay, summed."""
    phases: list
    bytes: int
    seconds: float
    files: int

    @property
    def gb_per_s(self):
        return gb_per_s(self.bytes, self.seconds)


def phases_of(report: dict, kind: str) -> Phases:
    """The phases of `kind` in a ckpt-replay --json report."""
    ph = [p for p in report["phases"] if p["kind"] == kind]
    return Phases(ph, sum(p["bytes"] for p in ph), sum(p["seconds"] for p in ph),
                  sum(p.get("files", 0) for p in ph))


def load(path) -> dict:
    with open(path) as f:
        return json.load(f)


def plan_bytes(replay: str, *args: str) -> int:
    """The bytes one run of `ckpt-replay ARGS` writes, from its --plan."""
    out = subprocess.run([replay, *args, "--plan", "--json"], capture_output=True, check=True, text=True)
    return json.loads(out.stdout)["totals"]["file_bytes"]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 3 and argv[0] == "rate":
        rate = phases_of(load(argv[1]), argv[2]).gb_per_s
        if rate is None:
            print(f"replay_report: no {argv[2]} phase with any time in {argv[1]}", file=sys.stderr)
            return 1
        print(rate)
        return 0
    if len(argv) >= 2 and argv[0] == "plan-bytes":
        print(plan_bytes(argv[1], *argv[2:]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
