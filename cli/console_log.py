"""How `zeroforge run` shows log records on the terminal: one plain line each, without Prefect's prefix.

Prefect's console handler writes "02:40:39.166 | INFO | Task run 'self-play-1d7' - gen 1 self-play: ..."; on the
terminal of a run that is the message alone ("warning: " or "error: " before records above INFO), without the
engine's bookkeeping lines (a flow run beginning, a run finished Completed, the temporary server's banner, the
Crashed and Cancelled states that Ctrl-C leaves) and without tracebacks (the run reports an error in one line and
keeps the traceback in <data>/logs/run-error.log). Only the terminal's handlers change: Prefect's API handler still
sends every record, prefix and all, to the Prefect UI.
"""
from __future__ import annotations

import logging
import re

#: Messages of Prefect's engine that say nothing the run's own lines do not (matched at the start of the message).
ENGINE_CHATTER = re.compile(r"(Beginning (sub)?flow run |Finished in state Completed\(|Created (task|subflow) run |"
                            r"Starting temporary server |Stopping temporary server |Executing )")


#: What Prefect's engine logs when Ctrl-C interrupts a run (a task run ends Crashed, the flow runs Cancelled): the
#: run says it in its own line ("stopped (Ctrl-C) during ..."), so the terminal drops these at any level.
INTERRUPT_ECHOES = re.compile(r"(Crash detected! Execution was aborted by an interrupt signal|Finished in state "
                              r"(Crashed\('Execution was aborted by an interrupt signal|Cancelled\())")


class PlainConsoleFormatter(logging.Formatter):
    """The message alone for INFO and below, "warning: MESSAGE" / "error: MESSAGE" above; no traceback."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.levelno >= logging.ERROR:
            return f"error: {message}"
        if record.levelno >= logging.WARNING:
            return f"warning: {message}"
        return message


class DropEngineChatter(logging.Filter):
    """Drops ENGINE_CHATTER records below WARNING and INTERRUPT_ECHOES at any level, and strips the traceback from
    the others."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if INTERRUPT_ECHOES.match(message) or (record.levelno < logging.WARNING and ENGINE_CHATTER.match(message)):
            return False
        record.exc_info, record.exc_text = None, None
        return True


def plain_console_logs() -> int:
    """Give the terminal handlers of the root and the "prefect" loggers (stream handlers, not files) the plain
    formatter and the filter above; returns how many handlers changed. Call after Prefect has set up its logging
    (it does when first imported)."""
    changed = 0
    for name in ("", "prefect"):
        for handler in logging.getLogger(name).handlers:
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                handler.setFormatter(PlainConsoleFormatter())
                if not any(isinstance(f, DropEngineChatter) for f in handler.filters):
                    handler.addFilter(DropEngineChatter())
                changed += 1
    return changed
