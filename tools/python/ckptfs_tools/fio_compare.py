"""tools/fio-compare's report: fio's JSON results of each case on both sides.

    python3 -m ckptfs_tools.fio_compare MANIFEST OUT PLAIN_DIR CKPTFS_DIR SIZE RUNTIME

MANIFEST has a tab-separated line per fio run: case, side (plain or
ckptfs), run number, fio's JSON output, its stderr and its exit status.
Prints the table and writes OUT.md and OUT.json; a case whose run failed
is n/a with fio's reason.
"""

from __future__ import annotations

import json
import sys

from .figures import median


def measure(json_text: str | None, err_text: str | None, rc: int):
    """(MB/s, IOPS, None) of one fio run, or (None, None, reason) when it failed."""
    reason = None
    try:
        if json_text is None:
            raise OSError("no output")
        # fio may print warnings before the JSON document.
        data = json.loads(json_text[json_text.index("{"):])
        jobs = data["jobs"]
        errors = [j.get("error", 0) for j in jobs]
        if rc != 0 or any(errors):
            reason = "fio error %s" % (next((e for e in errors if e), rc))
        else:
            bw = sum(j[d]["bw_bytes"] for j in jobs for d in ("read", "write"))
            iops = sum(j[d]["iops"] for j in jobs for d in ("read", "write"))
            return bw / 1e6, iops, None
    except (OSError, ValueError, KeyError) as e:
        reason = ("fio exit status %d" % rc) if rc else "no fio result (%s)" % type(e).__name__
    first = next((line.strip() for line in (err_text or "").splitlines() if line.strip()), "")
    if first:
        reason += ": " + first[:120]
    return None, None, reason


def summarize(runs: list) -> dict:
    """The median of a side's runs; a side with any failed run is n/a with its reason."""
    good = [r for r in runs if r[0] is not None]
    if len(good) < len(runs) or not good:
        return {"mb_per_s": None, "iops": None, "error": next(r[2] for r in runs if r[0] is None)}
    return {"mb_per_s": median(r[0] for r in good), "iops": median(r[1] for r in good), "runs": len(good)}


def compare(cases: dict, order: list) -> list[dict]:
    """A row per case: both sides summarized and ckptfs/plain."""
    rows = []
    for name in order:
        plain, ckpt = summarize(cases[name]["plain"]), summarize(cases[name]["ckptfs"])
        ratio = None
        if plain["mb_per_s"] and ckpt["mb_per_s"] is not None:
            ratio = ckpt["mb_per_s"] / plain["mb_per_s"]
        rows.append({"case": name, "plain": plain, "ckptfs": ckpt, "ratio": ratio})
    return rows


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    manifest, out, plain_dir, ckptfs_dir, size, runtime = argv
    cases, order = {}, []
    with open(manifest) as f:
        for line in f:
            name, side, _run, json_path, err_path, rc = line.rstrip("\n").split("\t")
            if name not in cases:
                cases[name] = {"plain": [], "ckptfs": []}
                order.append(name)
            cases[name][side].append(measure(read_text(json_path), read_text(err_path), int(rc)))
    rows = compare(cases, order)

    fmt = lambda v, p=1: "n/a" if v is None else ("%.*f" % (p, v))
    header = ["case", "plain MB/s", "ckptfs MB/s", "ckptfs/plain"]
    table = [[r["case"], fmt(r["plain"]["mb_per_s"]), fmt(r["ckptfs"]["mb_per_s"]), fmt(r["ratio"], 2)]
             for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(header))
    for t in table:
        print(line(t))
    notes = ["%s on %s: %s" % (r["case"], side, r[side]["error"])
             for r in rows for side in ("plain", "ckptfs") if r[side].get("error")]
    for n in notes:
        print("n/a: " + n)

    with open(out + ".md", "w") as f:
        f.write("# fio: plain `%s` vs ckptfs `%s`\n\n" % (plain_dir, ckptfs_dir))
        f.write("size %s per job, runtime cap %s s; MB/s = 1e6 bytes/s, median of runs.\n\n" % (size, runtime))
        f.write("| " + " | ".join(header) + " |\n|" + "|".join(["---"] + ["---:"] * 3) + "|\n")
        for t in table:
            f.write("| " + " | ".join(t) + " |\n")
        if notes:
            f.write("\n" + "".join("- n/a: %s\n" % n for n in notes))
    with open(out + ".json", "w") as f:
        json.dump({"plain_dir": plain_dir, "ckptfs_dir": ckptfs_dir, "size": size,
                   "runtime_s": float(runtime), "cases": rows}, f, indent=2)
        f.write("\n")
    print("wrote %s.md and %s.json" % (out, out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
