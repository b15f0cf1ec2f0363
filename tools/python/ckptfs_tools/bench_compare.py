"""tools/bench-compare's report (the script runs the measurements).

    python3 -m ckptfs_tools.bench_compare report WORK ROUNDS OUT WORKLOAD SCALE CKPTS CLK_TCK CPU_WHAT
    python3 -m ckptfs_tools.bench_compare daemon STATS_JSON

report reads SIDE-N.json (ckpt-replay) and SIDE-N.cpu (jiffies) for each
side (plain, ckptfs) and round, prints the table of medians with
ckptfs/plain and writes OUT.md. daemon prints the line of the mount's own
figures from its ckptfs-stat --json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import replay_report
from .figures import median

GiB = 2**30


def side_figures(reports: list[tuple[dict, int]], tck: int):
    """(write GB/s, restore GB/s, CPU s per GiB moved, bytes of a checkpoint): medians over rounds."""
    w, r, cpu, per_ckpt = [], [], [], None
    for report, jiffies in reports:
        writes, restores = replay_report.phases_of(report, "write"), replay_report.phases_of(report, "restore")
        w.append(writes.gb_per_s)
        r.append(restores.gb_per_s)
        cpu.append(jiffies / tck / ((writes.bytes + restores.bytes) / GiB))
        per_ckpt = writes.phases[0]["bytes"]
    return median(w), median(r), median(cpu), per_ckpt


def table(p, c, workload, scale, ckpts, rounds, cpu_what) -> str:
    f = lambda v, d=3: "n/a" if v is None else f"{v:.{d}f}"
    q = lambda a, b: "n/a" if a is None or not b else f"{a / b:.2f}"
    lines = [
        f"{workload} at scale {scale}: {ckpts} checkpoints of {c[3] / 1e9:.3f} GB, "
        f"8 ranks, fsync per file; median of {rounds} runs per side",
        "",
        "| | plain | ckptfs | ckptfs / plain |",
        "| --- | ---: | ---: | ---: |",
        f"| checkpoint write GB/s | {f(p[0])} | {f(c[0])} | {q(c[0], p[0])} |",
        f"| restore GB/s (cold cache) | {f(p[1])} | {f(c[1])} | {q(c[1], p[1])} |",
        f"| CPU s per GiB moved ({cpu_what}) | {f(p[2], 2)} | {f(c[2], 2)} | {q(c[2], p[2])} |",
    ]
    return "\n".join(lines) + "\n"


def daemon_line(stats: dict) -> str:
    s = stats["store"]
    return ("daemon: write amplification %.3f, %d stored runs, %d partial flushes, %d buffer waits"
            % (stats["write_amplification_milli"] / 1000, s["stored_runs_written"], s["partial_flushes"],
               s["buffer_waits"]))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 9 and argv[0] == "report":
        work, rounds, out, workload, scale, ckpts, tck, cpu_what = argv[1:]
        rounds, tck = int(rounds), int(tck)
        read = lambda name: Path(work, name).read_text()
        sides = {side: side_figures([(json.loads(read(f"{side}-{i}.json")), int(read(f"{side}-{i}.cpu")))
                                     for i in range(1, rounds + 1)], tck)
                 for side in ("plain", "ckptfs")}
        text = table(sides["plain"], sides["ckptfs"], workload, scale, ckpts, rounds, cpu_what)
        with open(out + ".md", "w") as f:
            f.write(text)
        print(text)
        return 0
    if len(argv) == 2 and argv[0] == "daemon":
        try:
            print(daemon_line(json.loads(Path(argv[1]).read_text())))
        except (OSError, ValueError, KeyError) as e:
            print(f"bench-compare: no daemon figures: {e}", file=sys.stderr)
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
