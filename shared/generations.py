"""How far a game's run has come, read from its model registry: the generations done and the one to run next.

A generation is done once its candidate was decided (promoted, rejected, or promoted and later retired by a
rollback). `zeroforge run --generations N` means N generations done in the data directory, across resumes: a run
stopped after k of them runs the N - k that are left.
"""
from __future__ import annotations

from shared.registry import DECIDED, ModelRegistry


def generations_done(registry: ModelRegistry) -> int:
    """The newest generation whose candidate was decided (0 for a new registry or one with only the initial model)."""
    return max((v.generation for v in registry.list() if v.generation >= 1 and v.status in DECIDED), default=0)


def next_generation(registry: ModelRegistry) -> int:
    """1 + generations_done(registry): the generation a (re)started pipeline runs next (1 for a new registry)."""
    return generations_done(registry) + 1


def generations_left(done: int, target: int | None) -> int | None:
    """Generations still to run to reach `target` done (None: no target, run until stopped), never below 0."""
    return None if target is None else max(0, target - done)


def progress_words(game: str, done: int, target: int | None, resuming: bool, max_hours: float | None = None) -> str:
    """Where a run of `game` starts (`resuming`: the data directory already holds models of it), e.g. "resuming
    tictactoe: 2 of 3 generations done; 1 to run", "starting tictactoe: 0 of 3 generations done; 3 to run",
    "resuming tictactoe: 4 generations done; running until stopped", or "tictactoe: 3 of 3 generations done; nothing
    to run" when nothing is left. `max_hours` (the run's wall-clock budget, pipeline.max_hours) adds ", for at most
    1.5 h" ("running for at most 1.5 h" without a target)."""
    left = generations_left(done, target)
    noun = "generation" if (done if target is None else target) == 1 else "generations"
    if left == 0:
        return f"{game}: {done} of {target} {noun} done; nothing to run"
    verb = "resuming" if resuming else "starting"
    budget = "" if max_hours is None else f"for at most {max_hours:g} h"
    if target is None:
        return f"{verb} {game}: {done} {noun} done; running " + (budget or "until stopped")
    return f"{verb} {game}: {done} of {target} {noun} done; {left} to run" + (f", {budget}" if budget else "")
