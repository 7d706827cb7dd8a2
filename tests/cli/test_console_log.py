"""cli.console_log on real log records: the terminal gets the message alone, Prefect's bookkeeping lines are dropped
there, and the other handlers (Prefect's API handler) keep the records as they were."""
from __future__ import annotations

import io
import logging

from cli.console_log import DropEngineChatter, PlainConsoleFormatter, plain_console_logs


def _record(message: str, level: int = logging.INFO, exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            import sys

            exc_info = sys.exc_info()
    return logging.LogRecord("prefect.task_runs", level, __file__, 1, message, (), exc_info)


def test_the_terminal_shows_the_message_alone_and_words_the_level_above_info() -> None:
    formatter = PlainConsoleFormatter()
    assert formatter.format(_record("gen 1 self-play: %d/2 jobs done" % 1)) == "gen 1 self-play: 1/2 jobs done"
    assert formatter.format(_record("no worker", logging.WARNING)) == "warning: no worker"
    assert formatter.format(_record("lost", logging.ERROR, exc=True)) == "error: lost"


def test_engine_bookkeeping_and_interrupt_echoes_are_dropped_and_tracebacks_always() -> None:
    chatter = DropEngineChatter()
    assert not chatter.filter(_record("Finished in state Completed()"))
    assert not chatter.filter(_record("Beginning subflow run 'x-gen1' for flow 'generation'"))
    assert not chatter.filter(_record("Starting temporary server on http://127.0.0.1:8296\nSee ..."))
    # what Ctrl-C leaves (the run says it in its own line), at any level; other failures stay
    assert not chatter.filter(_record("Crash detected! Execution was aborted by an interrupt signal.", logging.ERROR))
    assert not chatter.filter(_record("Finished in state Crashed('Execution was aborted by an interrupt signal.')",
                                      logging.ERROR))
    assert not chatter.filter(_record("Finished in state Cancelled('interrupted (Ctrl-C)')"))
    assert chatter.filter(_record("Finished in state Failed('Flow run encountered an exception.')", logging.ERROR))
    assert chatter.filter(_record("Crash detected! MemoryError", logging.ERROR))
    failed = _record("Finished in state Completed()", logging.ERROR, exc=True)
    assert chatter.filter(failed) and failed.exc_info is None


def test_only_the_terminal_handlers_change() -> None:
    root = logging.getLogger()
    terminal, other = logging.StreamHandler(io.StringIO()), logging.Handler()
    root.addHandler(terminal)
    root.addHandler(other)
    try:
        assert plain_console_logs() >= 1
        assert isinstance(terminal.formatter, PlainConsoleFormatter) and other.formatter is None
        assert not other.filters
        plain_console_logs()
        assert len([f for f in terminal.filters if isinstance(f, DropEngineChatter)]) == 1   # not added twice
    finally:
        root.removeHandler(terminal)
        root.removeHandler(other)
