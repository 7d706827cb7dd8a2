"""The pipeline's phase record: which generation a run is in and what it is doing, as a small JSON file.

The flows write it (atomically: a reader sees the old record or the new one) at DataLayout.phase_file, and
`zeroforge status` reads it. Example: {"generation": 3, "phase": "self-play", "detail": "1/2 jobs",
"state": "running", "time": "2026-11-30T20:15:00+00:00", "pid": 1234}.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from shared.atomic import atomic_output

#: What a run records as `state`: running, finished, interrupted (Ctrl-C / SIGTERM) or failed.
STATES = ("running", "finished", "interrupted", "failed")


def write_phase(path: Path, generation: int, phase: str, detail: str = "", state: str = "running") -> dict:
    """Record `generation` (int >= 0), `phase` (e.g. "self-play"), `detail` (e.g. "1/2 jobs") and `state` (one
    of STATES) at `path`, atomically, with the time and this process id; returns the record. ValueError on a
    state outside STATES."""
    if state not in STATES:
        raise ValueError(f"phase state {state!r}: expected one of {', '.join(STATES)}")
    record = {"generation": int(generation), "phase": phase, "detail": detail, "state": state,
              "time": datetime.now(timezone.utc).isoformat(timespec="seconds"), "pid": os.getpid()}
    with atomic_output(path) as handle:
        handle.write(json.dumps(record).encode("utf-8"))
    return record


def read_phase(path: Path) -> dict | None:
    """The record at `path` as written by write_phase; None when there is none or it cannot be read."""
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("generation"), int) else None


def phase_line(record: dict | None, with_state: bool = True) -> str:
    """One line for a phase record, e.g. "gen 3 self-play 1/2 jobs (running)" (without " (running)" when not
    `with_state`); "no pipeline recorded" for None."""
    if record is None:
        return "no pipeline recorded"
    detail = f" {record['detail']}" if record.get("detail") else ""
    state = f" ({record.get('state', '?')})" if with_state else ""
    return f"gen {record['generation']} {record.get('phase') or '?'}{detail}{state}"
