"""Best-effort TensorBoard scalars: write them when the `tensorboard` package is installed, never fail a job.

`ScalarWriter(run_dir)` opens a `torch.utils.tensorboard.SummaryWriter` on first use. Without the package it
logs TENSORBOARD_HINT once per process and writes nothing; any error while writing (a full disk, a read-only
mount) is logged once per writer and turns the writer off. Each writer makes its own event file in `run_dir`;
TensorBoard merges the files of one folder into one run.
"""
from __future__ import annotations

import importlib.util
import logging
import math
from pathlib import Path
from typing import Mapping

log = logging.getLogger(__name__)

TENSORBOARD_HINT = ("TensorBoard curves are off: the tensorboard package is not installed; "
                    "install it with `pip install 'zeroforge[tensorboard]'` (the figures are still kept in "
                    "reports/generations.jsonl and the Prefect artifact)")
_hint_logged = False


def tensorboard_installed() -> bool:
    """True when the `tensorboard` package can be imported (torch's SummaryWriter needs it)."""
    return importlib.util.find_spec("tensorboard") is not None


class ScalarWriter:
    """Writes scalar curves into one TensorBoard run folder; every failure is logged, never raised."""

    def __init__(self, run_dir: Path):
        self.run_dir = Path(run_dir)
        self._writer = None
        self._off = False

    def _open(self):
        global _hint_logged
        if self._writer is None and not self._off:
            if not tensorboard_installed():
                self._off = True
                if not _hint_logged:
                    _hint_logged = True
                    log.warning(TENSORBOARD_HINT)
                return None
            from torch.utils.tensorboard import SummaryWriter

            self.run_dir.mkdir(parents=True, exist_ok=True)
            self._writer = SummaryWriter(log_dir=str(self.run_dir))
        return self._writer

    def write(self, step: int, scalars: Mapping[str, float | int | None]) -> None:
        """Add each finite value of `scalars` (tag -> number; None and NaN are skipped) at integer `step`."""
        try:
            writer = self._open()
            if writer is None:
                return
            for tag, value in scalars.items():
                if value is not None and math.isfinite(float(value)):
                    writer.add_scalar(tag, float(value), global_step=int(step))
        except Exception as exc:  # curves are a convenience: a failure here must never fail a job
            self._fail(exc)

    def flush(self) -> None:
        """Push what was written to disk (TensorBoard sees it on its next reload)."""
        try:
            if self._writer is not None:
                self._writer.flush()
        except Exception as exc:
            self._fail(exc)

    def close(self) -> None:
        """Flush and close the event file; the writer may not be used afterwards."""
        try:
            if self._writer is not None:
                self._writer.close()
        except Exception as exc:
            self._fail(exc)
        self._writer, self._off = None, True

    def _fail(self, exc: Exception) -> None:
        log.warning("TensorBoard curves under %s are off for this job: %s", self.run_dir, exc)
        writer, self._writer, self._off = self._writer, None, True
        try:
            if writer is not None:
                writer.close()
        except Exception:  # already reported above; only its background thread is left to stop
            pass
