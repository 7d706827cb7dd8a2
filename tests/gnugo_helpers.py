"""Helpers of the tests that run GNU Go: a skip marker for machines without it, and the GNU Go processes a test
left running (none may remain)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from shared.games.go.gnugo import GnuGoError, find_gnugo


def gnugo_installed() -> bool:
    try:
        find_gnugo()
    except GnuGoError:
        return False
    return True


requires_gnugo = pytest.mark.skipif(not gnugo_installed(),
                                    reason="GNU Go is not installed (apt-get install gnugo; .ci/run installs it)")


def gnugo_children() -> list[int]:
    """Pids of the `gnugo` processes started by this process and not yet reaped (zombies included)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:                       # the process ended meanwhile
            continue
        name = text[text.index("(") + 1: text.rindex(")")]
        parent = text[text.rindex(")") + 2:].split()[1]
        if name == "gnugo" and int(parent) == os.getpid():
            pids.append(int(stat.parent.name))
    return pids
