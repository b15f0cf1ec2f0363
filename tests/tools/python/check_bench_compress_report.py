"""Checks tools/bench-compress's report from a --quick run (bench_compress_quick_test.sh).

Every mode has a row of the burst table, and the compressed modes really
stored less than they were given (stored ratio >= 1.3; none exactly 1).
Exit 0 when all holds, 1 naming what does not.
"""

import sys

MODES = {"none", "zstd:-3", "zstd:1", "zstd:-3+compress_backlog=raw", "zstd:-3+compress_when=idle"}


def stored_ratios(markdown: str) -> dict[str, float]:
    """{mode: stored ratio} from the burst table's rows."""
    rows = [line.split("|") for line in markdown.splitlines()
            if line.startswith("| none") or line.startswith("| zstd")]
    return {r[1].strip(): float(r[6]) for r in rows if len(r) > 9}


def problems(markdown: str) -> list[str]:
    modes = stored_ratios(markdown)
    if set(modes) != MODES:
        return ["modes reported: %s" % sorted(modes)]
    if (modes["none"] != 1.0 or modes["zstd:-3"] < 1.3 or modes["zstd:1"] < 1.3
            or modes["zstd:-3+compress_when=idle"] < 1.3):
        return ["stored ratios %s" % modes]
    return []


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        found = problems(f.read())
    for p in found:
        print("FAIL: " + p)
    sys.exit(1 if found else 0)
