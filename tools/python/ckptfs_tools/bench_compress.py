"""tools/bench-compress's report (the script runs the measurements).

    python3 -m ckptfs_tools.bench_compress WORK ROUNDS OUT SCALE CKPTS PAYLOAD CLK_TCK MODE...

Reads WORK/codec.json (ckptfs-compress-bench: the encoder's ratio per data
kind, file, level and mode) and, per mode and round, MODE-N.json
(ckpt-replay), MODE-N.cpu (jiffies), MODE-N.settle (idle seconds until the
stored bytes stopped shrinking) and MODE-N.stats (ckptfs-stat --json).
Prints the tables and writes OUT.md; the first mode is the baseline.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from dataclasses import dataclass

from . import replay_report
from .figures import median

GiB = 2**30


def codec_table(codec: list[dict]) -> list[str]:
    """The encoder's ratios per data kind, file and level: plain zstd, byte-grouped, auto."""
    by_input = {}
    for row in codec:
        key = (row["kind"], os.path.basename(row["input"]))
        by_input.setdefault(key, {}).setdefault(row["level"], {})[row["mode"]] = row
    lines = ["Encoder ratios (1 MiB runs, 4 KiB rounding, raw fallback): plain zstd / byte-grouped "
             "zstd (the better of group2 and group4) / auto, per zstd level", "",
             "| data | file | level | plain zstd | byte-grouped | auto | auto encode MB/s |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for (kind, name), levels in by_input.items():
        for level, c in sorted(levels.items(), key=lambda kv: kv[0]):
            ratio = lambda k: c[k].get("ratio", 0) if k in c else 0
            grouped = max(ratio("group2"), ratio("group4"))
            auto = c.get("auto", {})
            lines.append(f"| {kind} | {name} | {level} | {ratio('zstd'):.3f} | {grouped:.3f} | "
                         f"{auto.get('ratio', 0):.3f} | {auto.get('encode_mbps', 0):.0f} |")
    return lines


@dataclass
class ModeRound:
    write_gbps: float
    restore_gbps: float
    cpu_s_per_gib: float
    stored_ratio: float   # file bytes per stored byte, runs left raw included
    skipped_share: float  # runs the compressors never saw (compress_backlog=raw)
    settle_s: float
    checkpoint_bytes: int


def mode_round(report: dict, jiffies: int, tck: int, settle: int, stats: dict) -> ModeRound:
    """One mode's figures in one round."""
    writes, restores = replay_report.phases_of(report, "write"), replay_report.phases_of(report, "restore")
    st = stats["store"]
    taken = st.get("compressed_runs", 0) + st.get("compress_raw_runs", 0)
    return ModeRound(
        write_gbps=writes.gb_per_s,
        restore_gbps=restores.gb_per_s or 0,
        cpu_s_per_gib=jiffies / tck / (writes.bytes / GiB),
        stored_ratio=st["live_file_bytes"] / st["live_bytes"] if st.get("live_bytes") else 1.0,
        skipped_share=st.get("compress_skipped_runs", 0) / max(1, taken + st.get("compress_skipped_runs", 0)),
        settle_s=settle,
        checkpoint_bytes=writes.phases[0]["bytes"])


def burst_table(burst: dict[str, list[ModeRound]], scale, ckpts, payload, rounds) -> list[str]:
    """Per mode, the medians of its rounds, and write and restore against the first mode."""
    modes = list(burst)
    med = {m: {k: median(getattr(r, k) for r in rs) for k in ModeRound.__dataclass_fields__}
           for m, rs in burst.items()}
    base = med[modes[0]]
    per_ckpt = burst[modes[-1]][-1].checkpoint_bytes
    lines = [f"405B burst through the mount: scale {scale}, {ckpts} checkpoint(s) of "
             f"{per_ckpt / 1e9:.3f} GB, payload {payload}, 8 ranks, fsync per file; median of "
             f"{rounds} round(s), modes alternating", "",
             f"| compress= | write GB/s | vs {modes[0]} | restore GB/s | vs {modes[0]} | "
             "stored ratio | runs left raw (compressors behind) | idle s to compress | "
             "CPU s/GiB written |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for mode in modes:
        b = med[mode]
        restore_vs = b["restore_gbps"] / base["restore_gbps"] if base["restore_gbps"] else 0
        lines.append(f"| {mode} | {b['write_gbps']:.3f} | {b['write_gbps'] / base['write_gbps']:.2f} | "
                     f"{b['restore_gbps']:.3f} | {restore_vs:.2f} | {b['stored_ratio']:.3f} | "
                     f"{100 * b['skipped_share']:.0f}% | {b['settle_s']:.0f} | {b['cpu_s_per_gib']:.2f} |")
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 8:
        print(__doc__, file=sys.stderr)
        return 2
    work, rounds, out, scale, ckpts, payload, tck = argv[:7]
    modes = argv[7:]
    rounds, tck = int(rounds), int(tck)
    read = lambda name: Path(work, name).read_text()
    lines = codec_table(json.loads(read("codec.json"))) + [""]
    burst = {mode: [mode_round(json.loads(read(f"{mode}-{i}.json")), int(read(f"{mode}-{i}.cpu")), tck,
                               int(read(f"{mode}-{i}.settle")), json.loads(read(f"{mode}-{i}.stats")))
                    for i in range(1, rounds + 1)]
             for mode in modes}
    lines += burst_table(burst, scale, ckpts, payload, rounds)
    text = "\n".join(lines) + "\n"
    with open(out + ".md", "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
