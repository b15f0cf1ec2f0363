"""What machine a benchmark ran on, for its report: CPUs, memory, kernel and
the device under a directory.

    python3 -m ckptfs_tools.machine [DIR]     prints the facts as JSON
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys


def cpu_model(cpuinfo: str) -> str:
    """The first "model name" of /proc/cpuinfo's text."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return "unknown"


def mem_total_bytes(meminfo: str) -> int | None:
    """MemTotal of /proc/meminfo's text, in bytes."""
    for line in meminfo.splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return None


def read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def filesystem_of(directory: str) -> dict:
    """{source, fstype} of the filesystem that holds directory (findmnt), or {}."""
    try:
        out = subprocess.run(["findmnt", "-n", "-o", "SOURCE,FSTYPE", "-T", directory],
                             capture_output=True, text=True, timeout=10, check=True).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return {}
    return {"source": out[0], "fstype": out[1]} if len(out) == 2 else {}


def facts(directory: str | None = None) -> dict:
    found = {"cpus": os.cpu_count(), "cpu_model": cpu_model(read("/proc/cpuinfo")),
             "memory_bytes": mem_total_bytes(read("/proc/meminfo")), "kernel": platform.release()}
    if directory:
        found["filesystem"] = filesystem_of(directory)
    return found


def describe(m: dict) -> str:
    """One line: "2 CPUs (model), 24 GiB, kernel K; ext4 on /dev/vda1"."""
    text = "%s CPUs (%s), %s GiB, kernel %s" % (
        m.get("cpus", "?"), m.get("cpu_model", "?"),
        "?" if not m.get("memory_bytes") else "%.0f" % (m["memory_bytes"] / 2**30), m.get("kernel", "?"))
    fs = m.get("filesystem") or {}
    if fs:
        text += "; %s on %s" % (fs.get("fstype"), fs.get("source"))
    return text


if __name__ == "__main__":
    print(json.dumps(facts(sys.argv[1] if len(sys.argv) > 1 else None), indent=2))
