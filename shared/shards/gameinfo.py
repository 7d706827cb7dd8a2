"""The per-game `game_info` table of a shard (schema.GAME_INFO_DTYPE) and the resignation counts drawn from it.

A false resignation (AlphaGo Zero's measurement) is a resign-disabled game in which the resign rule fired for
a player who then won or drew: that player would have resigned a game it did not lose.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from shared.shards import schema


@dataclass(frozen=True)
class ResignCounts:
    """Resignations over a set of games (one self-play job, or a generation's jobs summed)."""

    resigned_games: int = 0       # games that ended by a resignation
    no_resign_games: int = 0      # games that were not allowed to resign
    would_resign_games: int = 0   # of those, games in which the resign rule fired
    false_resignations: int = 0   # of those, games the player who would have resigned then won or drew

    def as_dict(self) -> dict[str, int]:
        """{name: count} in schema.RESIGN_COUNT_ATTRS order."""
        return asdict(self)


def default_game_info(lengths: np.ndarray) -> np.ndarray:
    """game_info for games of lengths [G] rows with every ply recorded and no resignation: [G] GAME_INFO_DTYPE."""
    info = np.zeros(np.asarray(lengths).shape[0], schema.GAME_INFO_DTYPE)
    info["plies"] = lengths
    info["would_resign_ply"] = -1
    return info


def game_info_from_records(records, lengths: np.ndarray) -> np.ndarray:
    """game_info [G] GAME_INFO_DTYPE from a SelfPlayRecords' per-game fields; fields a records object lacks (or
    holds as None) take the defaults of default_game_info (plies = lengths [G], no resignation)."""
    info = default_game_info(lengths)
    for name in schema.GAME_INFO_DTYPE.names:
        values = getattr(records, name, None)
        if values is not None:
            values = np.asarray(values)
            if values.shape != info.shape:
                raise schema.ShardError(f"records.{name} has shape {values.shape}, expected {info.shape} "
                                        "(one value per game)")
            if values.size and not (np.issubdtype(values.dtype, np.integer) or values.dtype == bool):
                raise schema.ShardError(f"records.{name} must hold integers or booleans, got dtype {values.dtype}")
            info[name] = values
    return info


def resign_counts(game_info: np.ndarray, winners: np.ndarray) -> ResignCounts:
    """Counts of game_info [G] GAME_INFO_DTYPE with winners [G] int8 (+1 first player, -1 second, 0 draw)."""
    disabled = game_info["resign_disabled"] != 0
    fired = disabled & (game_info["would_resign_ply"] >= 0)
    # The would-be resigner won (winner == player) or drew (winner == 0): winner * player >= 0.
    false = fired & (np.asarray(winners).astype(np.int64) * game_info["would_resign_player"] >= 0)
    return ResignCounts(resigned_games=int((game_info["resigned"] != 0).sum()), no_resign_games=int(disabled.sum()),
                        would_resign_games=int(fired.sum()), false_resignations=int(false.sum()))
