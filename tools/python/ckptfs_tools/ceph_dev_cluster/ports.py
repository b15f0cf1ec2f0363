"""TCP ports in use on this machine, from /proc/net/tcp and tcp6: for a new
mon's ports, and to tell why an old mon cannot bind its own."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

LISTEN = "0A"  # the state column of a listening socket
FIRST_PORT, LAST_PORT = 20000, 31999  # below the ephemeral range


@dataclass(frozen=True)
class Socket:
    local_port: int
    state: str


def parse_tcp_table(text: str) -> list[Socket]:
    """The sockets of a /proc/net/tcp (or tcp6) table."""
    sockets = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 4:
            continue
        sockets.append(Socket(int(fields[1].rsplit(":", 1)[1], 16), fields[3]))
    return sockets


def tcp_sockets(proc: str = "/proc") -> list[Socket]:
    sockets: list[Socket] = []
    for table in ("tcp", "tcp6"):
        try:
            with open(os.path.join(proc, "net", table)) as f:
                sockets += parse_tcp_table(f.read())
        except OSError:
            continue
    return sockets


def free_port(sockets: list[Socket], avoid: set[int] = frozenset(), rng: random.Random | None = None) -> int | None:
    """A port in FIRST_PORT..LAST_PORT, drawn at random among those no socket
    uses (listening or connected from) and not in AVOID; None if there is none."""
    used = {s.local_port for s in sockets} | set(avoid)
    free = [p for p in range(FIRST_PORT, LAST_PORT + 1) if p not in used]
    return (rng or random.Random()).choice(free) if free else None


def listening(port: int, sockets: list[Socket]) -> bool:
    return any(s.local_port == port and s.state == LISTEN for s in sockets)
