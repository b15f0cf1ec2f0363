"""The arithmetic every benchmark report shares: sizes, medians, ratios and
how far a target was missed.

Benchmarks repeat each measurement in rounds and alternate the sides, so a
ratio is the median of per-round ratios (drift hits both sides of a round
alike), never a ratio of medians.
"""

from __future__ import annotations

import re
import statistics
from typing import Iterable, Optional

_SIZE = re.compile(r"(\d+)\s*([kmgt]?)(i?b?)", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes of a size as the tools write it: 4096, 64K, 512M, 4G, 1TiB, 8GB.

    Units are binary (K = 1024), as the daemon's and fio's are. Raises
    ValueError for anything else.
    """
    m = _SIZE.fullmatch(text.strip())
    if not m or (m.group(3) and not m.group(2) and m.group(3).lower() != "b"):
        raise ValueError(f"not a size: '{text}' (a number with K, M, G or T)")
    return int(m.group(1)) * 1024 ** " kmgt".index((m.group(2) or " ").lower())


def median(values: Iterable[Optional[float]]) -> Optional[float]:
    """The median of the values that are there (None is a failed run), or None."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def median_ratio(nums: Iterable[Optional[float]], dens: Iterable[Optional[float]]) -> Optional[float]:
    """The median of num/den over rounds where both were measured (den not 0)."""
    return median(n / d for n, d in zip(nums, dens) if n is not None and d)


def missed_by(value: float, threshold: float, op: str) -> str:
    """How far a missed target is from its line, and the factor it needs.

    op is the target's comparison: ">=" or ">" (at least), "<=" (at most).
    """
    if threshold <= 0 or value <= 0:
        return "%.2fx against %.2fx" % (value, threshold)
    if op == "<=":
        return "%.0f%% over (needs ×%.2f)" % ((value / threshold - 1) * 100, threshold / value)
    return "%.0f%% short (needs ×%.2f)" % ((1 - value / threshold) * 100, threshold / value)


def meets(value: float, threshold: float, op: str) -> bool:
    """Whether value meets a target of `op threshold`."""
    return {">=": value >= threshold, ">": value > threshold, "<=": value <= threshold}[op]


def f3(value: Optional[float]) -> str:
    """Three decimals, or n/a for a figure that was not measured."""
    return "n/a" if value is None else "%.3f" % value


def gb_per_s(nbytes: float, seconds: float) -> Optional[float]:
    """GB/s (1e9 bytes a second), or None for no time."""
    return nbytes / seconds / 1e9 if seconds else None


def target_row(name: str, value, op: str, threshold: float, detail: str | None = None, unit: str = "x") -> dict:
    """One row of the table: the ratio ckptfs/reference (unit "x"), or a
    figure of its own (another unit), against its target.

    op: ">=", ">" or "<=" for a target, "info" for a figure only reported.
    """
    if value is None:
        result, measured = "n/a", "n/a"
    else:
        result = "info" if op == "info" else ("met" if meets(value, threshold, op) else "missed")
        measured = "%.2f%s" % (value, unit) + (" (%s)" % detail if detail else "")
    required = "reported" if op == "info" else "%s %.2f%s" % ({">=": "≥", ">": ">", "<=": "≤"}[op], threshold, unit)
    short = missed_by(value, threshold, op) if result == "missed" else "—"
    return {"target": name, "measured": measured, "ratio": value, "required": required,
            "op": op, "threshold": threshold, "result": result, "missed_by": short}
