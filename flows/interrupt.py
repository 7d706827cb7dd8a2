"""Ctrl-C ends the flow runs as Cancelled, not Crashed.

Prefect 3's engine marks a flow run whose body raises KeyboardInterrupt as Crashed ("Execution was aborted by an
interrupt signal"). A flow body wrapped by `cancel_on_interrupt` returns a Cancelled state instead, which the
engine records as the run's final state; the caller of a flow that ended Cancelled gets prefect's CancelledRun,
so a parent flow wrapped the same way ends Cancelled too, and the command that called the outermost flow sees
CancelledRun (cli/run.py prints one line and how to resume).
"""
from __future__ import annotations

import functools
import inspect
import typing
from typing import Callable

from prefect.exceptions import CancelledRun
from prefect.states import Cancelled

INTERRUPTED = "interrupted (Ctrl-C); rerun the same command to resume"


def cancel_on_interrupt(fn: Callable) -> Callable:
    """Wrap a flow function (under @flow): KeyboardInterrupt or CancelledRun inside it returns
    Cancelled(message=INTERRUPTED). Not for tasks: a task called in a flow hands a returned state to the flow as its
    value, so a task interrupted by Ctrl-C stays Crashed (its flow run is Cancelled)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (KeyboardInterrupt, CancelledRun):
            return Cancelled(message=INTERRUPTED)
    # Prefect builds the parameter model from the signature; the flow modules' annotations are strings (from
    # __future__ import annotations) that only resolve in fn's module, so hand it the resolved signature.
    wrapper.__signature__ = inspect.signature(fn, eval_str=True)
    wrapper.__annotations__ = typing.get_type_hints(fn)
    return wrapper
