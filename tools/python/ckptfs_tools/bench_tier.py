"""tools/bench-tier's arithmetic and report (the script runs the measurements).

    python3 -m ckptfs_tools.bench_tier rate BYTES T0 T1          GB/s of BYTES from T0 to T1 (s)
    python3 -m ckptfs_tools.bench_tier drain-rate STATUS_JSON     the drain's GB/s on its own clock
    python3 -m ckptfs_tools.bench_tier store-size CHECKPOINT_BYTES  a store that holds one with room (e.g. 6G)
    python3 -m ckptfs_tools.bench_tier report RESULTS OUT_MD ROUNDS CHECKPOINT_BYTES DRAIN_BYTES
        writes OUT_MD and, beside it, the same as JSON (.json); the run's date,
        command line and store directory come in BT_DATE, BT_COMMAND, BT_STORE_DIR

RESULTS has a line per measurement, "NAME GB/S", each name once a round
(drain, drain_wait, rados_write_own, rados_write, rados_write_seg,
restore_read, restore_mmap, rados_seq, and burst_alone and burst_drained
when the burst was measured). Ratios are medians of per-round ratios.
"""

from __future__ import annotations

import json
import os
import sys

from . import machine
from .figures import gb_per_s, median_ratio, target_row


def parse_results(text: str) -> dict[str, list[float]]:
    """{name: [GB/s of each round]} of a RESULTS file."""
    rows: dict[str, list[float]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"results line {number}: '{line}' is not NAME VALUE")
        rows.setdefault(parts[0], []).append(float(parts[1]))
    return rows


def drain_rate(status: dict) -> float:
    """GB/s of the drain on its own clock: the cycles that sent bytes, without
    the daemon's connect and lock (as rados bench's clock leaves those out)."""
    if not status.get("sending_ms"):
        raise ValueError("the drain reported no time sending: " + json.dumps(status))
    return status["uploaded_bytes"] / (status["sending_ms"] / 1e3) / 1e9


def store_size_gib(checkpoint_bytes: int) -> int:
    """GiB of a store for one checkpoint: 2.6 times it (the log, cleaning room) plus 2."""
    return int(checkpoint_bytes * 2.6 / 2**30) + 2


def targets(rows: dict[str, list[float]], drain_bytes: int) -> list[dict]:
    """The report's rows: each measurement against its reference, the median of per-round ratios."""
    own = f"{drain_bytes / 2**20:g} MiB"
    spec = [(f"drain vs rados bench write, {own} objects (the drain's write size)", "drain", "rados_write_own", 0.9),
            ("the same, the drain timed from the mount to `ckptfs-tier wait`", "drain_wait", "rados_write_own", None),
            ("drain vs rados bench write, 4 MiB objects (its default)", "drain", "rados_write", None),
            (f"drain vs rados bench write, segment-sized objects, {own} writes", "drain", "rados_write_seg", None),
            ("restore from RADOS (read) vs rados bench seq", "restore_read", "rados_seq", 0.9),
            ("restore from RADOS (mmap) vs rados bench seq", "restore_mmap", "rados_seq", None)]
    if "burst_alone" in rows:
        spec.append(("405B burst with a drain vs alone", "burst_drained", "burst_alone", 0.9))
    out = []
    for name, num, den, threshold in spec:
        detail = "/".join(f"{v:.3f}" for v in rows[num]) + " / " + "/".join(f"{v:.3f}" for v in rows[den]) + " GB/s"
        out.append(target_row(name, median_ratio(rows[num], rows[den]), "info" if threshold is None else ">=",
                              threshold or 0, detail))
    return out


def report(rows: dict[str, list[float]], rounds: int, checkpoint_bytes: int, drain_bytes: int) -> str:
    out = ["# RADOS tier against RADOS and against the burst alone (tools/bench-tier)", "",
           f"{rounds} round(s); one 405B checkpoint is {checkpoint_bytes / 1e9:.3f} GB; GB/s = 1e9 bytes/s; "
           "ratios are medians of per-round ratios.", "",
           "| target | measured | required |", "| --- | --- | --- |"]
    for t in targets(rows, drain_bytes):
        out.append(f"| {t['target']} | {t['measured']} | {t['required']} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    verb, args = (argv[0], argv[1:]) if argv else ("", [])
    try:
        if verb == "rate" and len(args) == 3:
            rate = gb_per_s(int(args[0]), float(args[2]) - float(args[1]))
            if rate is None:
                raise ValueError("no time between T0 and T1")
            print(rate)
        elif verb == "drain-rate" and len(args) == 1:
            with open(args[0]) as f:
                print(drain_rate(json.load(f)))
        elif verb == "store-size" and len(args) == 1:
            print(f"{store_size_gib(int(args[0]))}G")
        elif verb == "report" and len(args) == 5:
            with open(args[0]) as f:
                rows = parse_results(f.read())
            rounds, checkpoint_bytes, drain_bytes = int(args[2]), int(args[3]), int(args[4])
            text = report(rows, rounds, checkpoint_bytes, drain_bytes)
            out_md = args[1]
            with open(out_md, "w") as f:
                f.write(text)
            # The same as data, for docs/results.md (ckptfs_tools.results).
            config = {"rounds": rounds, "checkpoint_bytes": checkpoint_bytes, "drain_bytes": drain_bytes,
                      "date": os.environ.get("BT_DATE", ""), "command": os.environ.get("BT_COMMAND", ""),
                      "machine": machine.facts(os.environ.get("BT_STORE_DIR") or None)}
            with open(os.path.splitext(out_md)[0] + ".json", "w") as f:
                json.dump({"config": config, "targets": targets(rows, drain_bytes), "rounds": rows}, f, indent=2)
                f.write("\n")
            print(text)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except (OSError, ValueError, KeyError) as e:
        print(f"bench-tier: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
