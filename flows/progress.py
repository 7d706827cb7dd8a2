"""What the flows tell the user while they wait: throttled progress lines and the pipeline's phase record.

`run_progress_line` is the run's overall line (generation k of N, run ETA) that the pipeline logs before each
generation. `Waiter` is the progress callback of services.jobqueue.run_jobs / wait_for_jobs for one phase of one
generation: at most one log line every ~10 s (services.progress.LogThrottle; a finished job prints at once) with the
jobs done, and each running job's own progress (games and rate, steps and loss) with an ETA; each line also updates
the phase record (shared.phase) that `zeroforge status` reads.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Callable

from services.jobqueue import WaitProgress
from services.progress import LogThrottle, progress_text
from shared.layout import DataLayout
from shared.phase import write_phase

log = logging.getLogger(__name__)


def record_phase(layout: DataLayout, generation: int, phase: str, detail: str = "", state: str = "running") -> None:
    """Write the phase record of `layout`'s game (shared.phase.write_phase); a failure to write is logged, never
    raised: the record is for `zeroforge status`, the run goes on without it."""
    try:
        write_phase(layout.phase_file, generation, phase, detail, state)
    except OSError as exc:
        log.warning("could not record the pipeline phase in %s (%s)", layout.phase_file, exc)


class Waiter:
    """A WaitProgress callback for `phase` of `generation`: logs through `logger` (throttled) and records the
    phase. extra(p) -> str adds to each line (the gate's current score); on_wait(p) runs at every call."""

    def __init__(self, logger, layout: DataLayout, generation: int, phase: str,
                 extra: Callable[[WaitProgress], str] | None = None,
                 on_wait: Callable[[WaitProgress], None] | None = None) -> None:
        self.logger, self.layout, self.generation, self.phase = logger, layout, generation, phase
        self.extra, self.on_wait = extra, on_wait
        self.throttle = LogThrottle()
        record_phase(layout, generation, phase, "starting")

    def __call__(self, p: WaitProgress) -> None:
        if self.on_wait is not None:
            self.on_wait(p)
        if not self.throttle.due(p.finished):
            return
        text = progress_text(p.finished, p.total, p.started, p.elapsed_s, p.running)
        if self.extra is not None:
            text += self.extra(p)
        self.logger.info("gen %d %s: %s", self.generation, self.phase, text)
        record_phase(self.layout, self.generation, self.phase, f"{p.finished}/{p.total} jobs")


def _clock_time(moment: datetime) -> str:
    """A timezone-aware moment as the run's lines name it, e.g. "03:41 (CET)"."""
    return f"{moment:%H:%M} ({moment.tzname()})"


def run_progress_line(game: str, generation: int, target: int | None, generation_seconds: list[float],
                      now: datetime | None = None, budget_end: datetime | None = None) -> str:
    """The run's overall progress line at the start of `generation`, e.g. "tictactoe generation 3 of 5: 2 done,
    3 to go at 4.2 min a generation; run ETA 03:41 (CET)", the ETA in the machine's local time. `target`: the
    generations the run is to reach (None: until stopped); `generation_seconds`: the wall seconds of the generations
    finished so far (the newest last), whose mean times the generations left, this one included, gives the ETA;
    none yet: "run ETA after this generation". `budget_end` (timezone-aware): when the run's wall-clock budget
    (pipeline.max_hours) ends, named in place of "(until stopped)" or after the ETA. `now` (timezone-aware; default:
    the clock) is for tests."""
    done = generation - 1
    budget = "" if budget_end is None else f"time budget ends {_clock_time(budget_end)}"
    mean_s = sum(generation_seconds) / len(generation_seconds) if generation_seconds else None
    pace = "" if mean_s is None else f"{mean_s / 60.0:.1f} min a generation"
    if target is None:
        head = f"{game} generation {generation} ({budget or 'until stopped'}): {done} done"
        return head if mean_s is None else f"{head} at {pace}"
    head = f"{game} generation {generation} of {target}: {done} done"
    tail = f"; {budget}" if budget else ""
    if mean_s is None:
        return f"{head}; run ETA after this generation{tail}"
    left = max(1, target - done)
    end = (now or datetime.now().astimezone()) + timedelta(seconds=mean_s * left)
    return f"{head}, {left} to go at {pace}; run ETA {_clock_time(end)}{tail}"
