"""Ctrl-C ends the flow runs as Cancelled, not Crashed.

Prefect 3's engine marks a flow run whose body raises KeyboardInterrupt as Crashed ("Execution was aborted by an
interrupt signal"). A flow body wrapped by `cancel_on_interrupt` returns a Cancelled state instead, which the
engine records as the run's final state; the caller of a flow that ended Cancelled gets prefect's CancelledRun,
so a parent flow wrapped the same way ends Cancelled too, and the command that called the outermost flow sees
CancelledRun (cli/run.py prints one line and how to resume).
"""
from __future__ import annotations

import functools
from typing import Callable

from prefect.exceptions import CancelledRun
from prefect.states import Cancelled

INTERRUPTED = "interrupted (Ctrl-C); rerun the same command to resume"


def cancel_on_interrupt(fn: Callable) -> Callable:
    """Wrap a flow function: KeyboardInterrupt or CancelledRun inside it returns Cancelled(message=INTERRUPTED)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (KeyboardInterrupt, CancelledRun):
            return Cancelled(message=INTERRUPTED)
    return wrapper
