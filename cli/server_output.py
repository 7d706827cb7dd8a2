"""The Prefect server's terminal output under `zeroforge ui`, less Prefect's start-up banner.

`prefect server start` prints a banner advising `prefect config set PREFECT_API_URL=...`; under zeroforge
that advice is wrong (every run finds its data directory's server by itself, and a global setting would send
other data directories' runs to this server), so `zeroforge ui` prints its own line instead and passes on
everything else the server writes.
"""
from __future__ import annotations

import re
import threading
from typing import IO

#: Lines of Prefect's banner: its ASCII-art logo and its sentences about configuring and visiting the server.
_BANNER = re.compile(r"^\s*$|^[\s_|/\\()<>.-]+$|Configure Prefect to communicate|prefect config set "
                     r"PREFECT_API_URL|View the API reference|Check out the dashboard|dashboard is (not built|"
                     r"disabled)|PREFECT_UI_ENABLED=1|prefect dev")


def is_banner_line(line: str) -> bool:
    """Whether `line` (one line of the server's stdout, newline or not) belongs to Prefect's start-up banner
    (or is blank); the server's own log lines never do."""
    text = line.rstrip("\n")
    return bool(_BANNER.search(text))


def forward_without_banner(source: IO[str], sink: IO[str]) -> threading.Thread:
    """Copy `source` (the server's stdout, text) line by line to `sink`, dropping banner lines, in a daemon
    thread until `source` ends; returns the thread (started)."""
    def copy() -> None:
        for line in source:
            if not is_banner_line(line):
                sink.write(line)
                sink.flush()

    thread = threading.Thread(target=copy, name="prefect-server-output", daemon=True)
    thread.start()
    return thread
