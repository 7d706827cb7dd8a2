"""The per-run metrics file: one JSON line of figures per finished generation, appended by the pipeline.

`<data>/games/<game>/reports/generations.jsonl` (DataLayout.metrics_path). The TensorBoard per-generation
curves and the Prefect "curves" artifact are both drawn from these records. Values are from the first
player's point of view where a game result is meant (first_player_win_rate), and from the candidate's point
of view for the gate (score, Elo) and the new best's for the anchor match.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.stats import score_from_elo

log = logging.getLogger(__name__)

#: The roles of a generation's worker-time figures (services.worker_time), in report order, with their labels.
WORKER_ROLES = ("selfplay", "train", "gate", "anchor", "idle")
WORKER_ROLE_LABELS = ("self-play", "training", "gate", "anchor", "idle")


class GenerationMetrics(BaseModel):
    """The figures of one finished generation (None: not measured, e.g. no anchor match or no new games)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    generation: int = Field(ge=1)
    time: str = Field(description="UTC time the generation was recorded, ISO 8601")
    # self-play: totals over the generation's shards; speed from the stage's wall clock and the newly played games
    games: int = Field(ge=0)
    positions: int = Field(ge=0)
    first_player_wins: int = Field(ge=0)
    draws: int = Field(ge=0)
    second_player_wins: int = Field(ge=0)
    selfplay_seconds: float | None = Field(None, description="wall seconds from enqueue to the last self-play job")
    generation_seconds: float | None = Field(
        None, ge=0, description="wall seconds of the whole generation: self-play, training, gate, promotion, anchor")
    games_per_s: float | None = None
    positions_per_s: float | None = None
    # training (means over the last 50 steps; first_loss over the first 50)
    loss: float | None = None
    policy_loss: float | None = None
    value_loss: float | None = None
    first_loss: float | None = None
    train_steps: int | None = None
    replay_positions: int | None = Field(None, description="positions in the replay window the candidate trained on")
    # gate: the candidate's score against the best model, 95% interval
    candidate: str | None = None
    best_before: str | None = None
    gate_games: int | None = None
    gate_score: float | None = None
    gate_ci_low: float | None = None
    gate_ci_high: float | None = None
    gate_elo: float | None = None
    promoted: bool = False
    # anchor match of a new best model (only generations that promoted, with gate.anchor set)
    anchor: str | None = None
    anchor_score: float | None = None
    anchor_ci_low: float | None = None
    anchor_ci_high: float | None = None
    anchor_elo: float | None = None
    anchor_elo_low: float | None = None
    anchor_elo_high: float | None = None
    # oracle figures of the best model after the decision (flows.oracle): the share of labelled positions where
    # its raw policy / its search keeps the exact outcome (or plays an optimal move), 95% Wilson intervals
    oracle_positions: int | None = None
    oracle_simulations: int | None = None
    oracle_raw: float | None = None
    oracle_raw_ci_low: float | None = None
    oracle_raw_ci_high: float | None = None
    oracle_search: float | None = None
    oracle_search_ci_low: float | None = None
    oracle_search_ci_high: float | None = None
    oracle_raw_optimal: float | None = None
    oracle_raw_optimal_ci_low: float | None = None
    oracle_raw_optimal_ci_high: float | None = None
    oracle_search_optimal: float | None = None
    oracle_search_optimal_ci_low: float | None = None
    oracle_search_optimal_ci_high: float | None = None
    oracle_random: float | None = Field(None, description="expected rate of a uniformly random legal move")
    oracle_seconds: float | None = Field(None, description="wall seconds of the measurement (set build excluded)")
    # where the workers' time went during the generation's wall clock (services.worker_time): worker-seconds by
    # role, over `workers` live workers; self-play enqueued ahead counts in the generation whose clock it used
    workers: int | None = None
    worker_selfplay_s: float | None = None
    worker_train_s: float | None = None
    worker_gate_s: float | None = None
    worker_anchor_s: float | None = None
    worker_idle_s: float | None = None

    def worker_share(self, role: str) -> float | None:
        """The fraction of the generation's worker-seconds spent in `role` ("selfplay", "train", "gate", "anchor",
        "idle"); None when not measured."""
        parts = [getattr(self, f"worker_{r}_s") for r in WORKER_ROLES]
        if any(p is None for p in parts) or sum(parts) <= 0:
            return None
        return getattr(self, f"worker_{role}_s") / sum(parts)

    @property
    def mean_game_length(self) -> float | None:
        """Recorded positions per game (the number of moves when every move is recorded)."""
        return self.positions / self.games if self.games else None

    @property
    def anchor_interval(self) -> tuple[float, float] | None:
        """The anchor score's 95% interval; for records written before it was stored, from the Elo interval
        (shared.stats.score_from_elo: exact except where a 0% or 100% score was clipped for its Elo). None
        without an anchor match."""
        if self.anchor_ci_low is not None and self.anchor_ci_high is not None:
            return self.anchor_ci_low, self.anchor_ci_high
        if self.anchor_elo_low is None or self.anchor_elo_high is None:
            return None
        return score_from_elo(self.anchor_elo_low), score_from_elo(self.anchor_elo_high)

    @property
    def first_player_win_rate(self) -> float | None:
        """Fraction of the self-play games won by the player who moved first."""
        return self.first_player_wins / self.games if self.games else None

    @property
    def draw_rate(self) -> float | None:
        """Fraction of the self-play games drawn."""
        return self.draws / self.games if self.games else None

    def scalars(self) -> dict[str, float | None]:
        """TensorBoard tag -> value of this generation (x = generation); see README "Curves"."""
        return {
            "selfplay/games_per_s": self.games_per_s,
            "selfplay/positions_per_s": self.positions_per_s,
            "selfplay/mean_game_length": self.mean_game_length,
            "selfplay/first_player_win_rate": self.first_player_win_rate,
            "selfplay/draw_rate": self.draw_rate,
            "selfplay/draws": self.draws,
            "generation/loss": self.loss,
            "generation/policy_loss": self.policy_loss,
            "generation/value_loss": self.value_loss,
            "generation/replay_window_positions": self.replay_positions,
            "gate/score": self.gate_score,
            "gate/ci_low": self.gate_ci_low,
            "gate/ci_high": self.gate_ci_high,
            "gate/promoted": int(self.promoted),
            "anchor/elo": self.anchor_elo,
            "anchor/elo_low": self.anchor_elo_low,
            "anchor/elo_high": self.anchor_elo_high,
            "oracle/raw_policy": self.oracle_raw,
            "oracle/search": self.oracle_search,
            "oracle/raw_policy_optimal": self.oracle_raw_optimal,
            "oracle/search_optimal": self.oracle_search_optimal,
            "oracle/random_move": self.oracle_random,
            **{f"worker_time/{role}_share": self.worker_share(role)
               for role in WORKER_ROLES},
        }


@dataclass(frozen=True)
class ElapsedHours:
    """Wall-clock hours of training at the end of one generation, summed over the generations up to it."""

    generation: int
    hours: float
    #: True when some generation up to this one has no recorded duration (records written before
    #: generation_seconds existed): its duration is then the time since the previous record, which includes
    #: any pause between two sittings of a resumed run; for the file's first record, the time since `started`
    #: (the run's start) when given, else its self-play time only
    estimated: bool


def elapsed_hours(records: list[GenerationMetrics], started: datetime | None = None) -> list[ElapsedHours]:
    """Cumulative training hours at the end of each record (records in generation order, as read_metrics
    returns them): the sum of the generations' `generation_seconds`, with the fallbacks of ElapsedHours.
    started: when the run began (e.g. the registry's first model; timezone-aware), used only for a first record
    without a duration."""
    out, total, estimated, previous = [], 0.0, False, started
    for record in records:
        seconds = record.generation_seconds
        if seconds is None:
            estimated = True
            now = datetime.fromisoformat(record.time)
            seconds = ((now - previous).total_seconds() if previous is not None and previous <= now
                       else float(record.selfplay_seconds or 0.0))
        total += max(0.0, seconds)
        previous = datetime.fromisoformat(record.time)
        out.append(ElapsedHours(record.generation, total / 3600.0, estimated))
    return out


def append_metrics(path: Path, record: GenerationMetrics) -> None:
    """Append `record` as one JSON line to `path` (made with its folder if missing), flushed to disk."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = record.model_dump_json() + "\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def read_metrics(path: Path) -> list[GenerationMetrics]:
    """The records of `path` in generation order, the last line of a generation winning (a generation recorded
    again after a resume); a damaged line is skipped with a warning. [] when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return []
    by_generation: dict[int, GenerationMetrics] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = GenerationMetrics.model_validate(json.loads(line))
        except (ValueError, ValidationError) as exc:
            log.warning("skipping damaged line %d of %s (%s)", number, path, str(exc).splitlines()[0])
            continue
        by_generation[record.generation] = record
    return [by_generation[g] for g in sorted(by_generation)]
