"""What the environment sets for a run of the tool (tools/ceph-dev-cluster --help)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ckptfs_tools.ceph_dev_cluster.errors import UsageError
from ckptfs_tools.ceph_dev_cluster.layout import MAX_OSDS


def positive(name: str, text: str) -> int:
    if not re.fullmatch(r"[1-9][0-9]*", text):
        raise UsageError("%s needs a positive integer, not '%s'" % (name, text))
    return int(text)


def osd_count_arg(name: str, text: str) -> int:
    n = positive(name, text)
    if n > MAX_OSDS:
        raise UsageError("%s: 1 to %d, not %d" % (name, MAX_OSDS, n))
    return n


@dataclass(frozen=True)
class Settings:
    """What the environment sets (the environment part of --help). An empty
    variable counts as unset, as the shell's ${VAR:-default} has it."""
    default_osds: str | None  # CEPH_DEV_OSDS, checked by a start that uses it
    timeout: int
    stop_timeout: int
    osd_size_gib: int
    pg_num: int

    @staticmethod
    def from_env(env, verb: str) -> "Settings":
        """The settings; those a verb does not use are not checked (a stop
        works whatever CEPH_DEV_PG_NUM says)."""

        def number(name: str, default: int, verbs: tuple[str, ...]) -> int:
            return positive(name, env.get(name) or str(default)) if verb in verbs else default

        return Settings(default_osds=env.get("CEPH_DEV_OSDS") or None,
                        timeout=number("CEPH_DEV_TIMEOUT", 120, ("start", "osd-start")),
                        stop_timeout=number("CEPH_DEV_STOP_TIMEOUT", 20, (verb,)),
                        osd_size_gib=number("CEPH_DEV_OSD_SIZE", 16, ("start",)),
                        pg_num=number("CEPH_DEV_PG_NUM", 32, ("start", "osd-start")))

    def osds_of_new_cluster(self, osds_arg: str | None) -> int | None:
        """--osds if given, else CEPH_DEV_OSDS, else None (1)."""
        if osds_arg is not None:
            return osd_count_arg("--osds", osds_arg)
        return osd_count_arg("CEPH_DEV_OSDS", self.default_osds) if self.default_osds else None
