"""The trainer's per-step TensorBoard curves: loss, policy loss, value loss, learning rate, gradient norm (and the
ownership loss of a network with an ownership head).

Steps are numbered across generations: generation g's first step is 1 + the optimiser steps of every
candidate registered for generations 1..g-1 (read from the registry, so a resumed or re-run job numbers its
steps the same way). The trainer reports the steps after each checkpoint, so a job resumed from its
checkpoint continues the curve without writing a step twice. Writing is best effort (shared.curves.events).
"""
from __future__ import annotations

from pathlib import Path

from shared.curves import ScalarWriter
from shared.registry import ModelRegistry

#: key of a train_step record -> TensorBoard tag (x = global optimiser step)
STEP_TAGS = {"loss": "train/loss", "policy_loss": "train/policy_loss", "value_loss": "train/value_loss",
             "lr": "train/learning_rate", "grad_norm": "train/grad_norm",
             "ownership_loss": "train/ownership_loss"}     # networks with an ownership head only


def steps_before(registry: ModelRegistry, generation: int) -> int:
    """Optimiser steps of all candidates registered for generations 1..generation-1 (0 for generation 1)."""
    return sum(int((v.training or {}).get("steps", 0)) for v in registry.list() if 1 <= v.generation < generation)


class StepCurves:
    """Writes train_step records to a TensorBoard run; step i of this job (0-based) is at x = first + i + 1."""

    def __init__(self, run_dir: Path, first: int):
        self.first = first
        self._writer = ScalarWriter(run_dir)

    def write(self, history: list[dict[str, float]], start: int, stop: int) -> None:
        """Write the records history[start:stop] (each with the keys of STEP_TAGS; a missing key is skipped)."""
        for i in range(start, stop):
            self._writer.write(self.first + i + 1, {tag: history[i].get(key) for key, tag in STEP_TAGS.items()})
        self._writer.flush()

    def close(self) -> None:
        """Close the event file."""
        self._writer.close()
