"""Resignation threshold calibrated from the games that were not allowed to resign (AlphaGo Zero's method).

In a resign-disabled game every player's lowest root search value is known, and so is how the game ended for
that player. A threshold t would have made that player resign if its lowest value was below t, and that
resignation is false if the player then won or drew. `calibrated_resign_threshold` picks the highest t (the
most resignations) not above the configured ceiling whose false share over the sampled players stays within
the target (5% by default); the floor keeps resignation alive, so the next generation still measures it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from shared.games.base import F_PLAYER
from shared.shards.reader import read_shard, scan_shards
from shared.shards.schema import ShardError

#: The lowest threshold calibration returns: only values this close to a certain loss (or a proven loss) resign.
RESIGN_FLOOR = -0.999


@dataclass(frozen=True)
class ResignSamples:
    """One row per (resign-disabled game, player who moved in it)."""

    lowest_value: np.ndarray   # [N] float32: that player's lowest root value over its moves (its own view)
    outcome: np.ndarray        # [N] int8: +1 that player won, 0 draw, -1 lost
    generations: tuple[int, ...]

    @property
    def size(self) -> int:
        return int(self.lowest_value.shape[0])


@dataclass(frozen=True)
class ResignCalibration:
    """The chosen threshold and what it would have done on the samples."""

    threshold: float
    samples: int
    fired: int       # sampled players whose lowest value is below the threshold
    false: int       # of those, players who won or drew

    def describe(self) -> str:
        """e.g. 'resign threshold -0.970 (calibrated: 2/40 false of 52 no-resign players)'."""
        return (f"resign threshold {self.threshold:.3f} (calibrated: {self.false}/{self.fired} false of "
                f"{self.samples} no-resign players)")


def no_resign_samples(shards_dir: Path, generations: Iterable[int], game) -> ResignSamples:
    """The resign-disabled games of `generations` under `shards_dir` (unreadable shards skipped) as ResignSamples.

    Positions are taken from the moves table (root_value is the side to move's view; player = the side to move,
    from the stored state's player field); games whose rows skip plies (playout caps) still give each player's
    lowest value over the positions that were searched in full.
    """
    wanted = set(int(g) for g in generations)
    lowest, outcome = [], []
    for info in scan_shards(Path(shards_dir), recursive=True).infos:
        if info.generation not in wanted:
            continue
        try:
            shard = read_shard(info.path, game=game)
        except ShardError:
            continue
        disabled = np.flatnonzero(shard.game_info["resign_disabled"] != 0)
        if disabled.size == 0:
            continue
        winners = dict(zip(shard.games["game_id"].tolist(), shard.games["winner"].tolist()))
        player = shard.states[:, game.num_cells + F_PLAYER].astype(np.int64)       # [T] +1 / -1
        game_ids = shard.moves["game_id"]
        for g in shard.games["game_id"][disabled].tolist():
            rows = game_ids == g
            for side in (1, -1):
                mine = rows & (player == side)
                if mine.any():
                    lowest.append(float(shard.moves["root_value"][mine].min()))
                    outcome.append(int(np.sign(winners[g] * side)))
    return ResignSamples(np.asarray(lowest, np.float32), np.asarray(outcome, np.int8), tuple(sorted(wanted)))


def calibrated_resign_threshold(samples: ResignSamples, ceiling: float, target_false_rate: float = 0.05,
                                floor: float = RESIGN_FLOOR) -> ResignCalibration:
    """The highest threshold t in [floor, ceiling] with false/fired <= target_false_rate on `samples`.

    A player "fires" at t when its lowest value < t; false = fired and outcome >= 0. Candidate thresholds are the
    ceiling and each sampled lowest value in between (resigning strictly below it); with no samples the ceiling.
    """
    if not floor <= ceiling < 0:
        raise ValueError(f"need floor <= ceiling < 0, got floor {floor}, ceiling {ceiling}")
    values, won_or_drew = samples.lowest_value.astype(np.float64), samples.outcome >= 0
    candidates = sorted({ceiling, floor} | {float(v) for v in values if floor < v < ceiling}, reverse=True)
    for t in candidates:
        fired = values < t
        false = int((fired & won_or_drew).sum())
        if false <= target_false_rate * int(fired.sum()):
            return ResignCalibration(t, samples.size, int(fired.sum()), false)
    fired = values < floor
    return ResignCalibration(floor, samples.size, int(fired.sum()), int((fired & won_or_drew).sum()))
