"""Network size specifications and THE table of per-game default sizes.

A `NetworkSpec` fixes the size of a `PolicyValueNet` trunk and value head; the board geometry
(input planes, height, width, action count) comes from the game, so one spec can serve any game.
`default_network_spec(name)` is the only place that says how large a game's network is: the pipeline's
config defaults ([game] blocks/channels), `create_model(spec=None)` and `zeroforge bench` all read it.

=================  ===============  ===========================================================
game               blocks x chans   reason
=================  ===============  ===========================================================
tictactoe          2 x 32           9 cells; anything larger only slows learning a solved game
connect4           4 x 64           42 cells; four 3x3 blocks see a four-in-a-row across the board
gomoku <= 49 cells 3 x 32           tiny boards (6x6 four in a row): cheap enough for many CPU games
gomoku <= 121      4 x 48           8x8 .. 11x11: the CPU-sized net of the shipped 8x8 model
larger gomoku      10 x 128         15x15 and up: the flagship size (seed 004); wants a GPU for speed
othello-6x6        4 x 64           36 cells but long-range flips
othello            6 x 64           64 cells, long-range flips need depth more than width
go <= 9x9          6 x 64           81 cells, 17 input planes; groups and liberties need depth
larger go          10 x 128         13x13 and 19x19: wants a GPU for speed
=================  ===============  ===========================================================

Every default has a value head of 64 hidden units. A run can choose another size with
`--set game.blocks=N --set game.channels=M`; the model file records the size it was built with.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any


class NetworkError(ValueError):
    """Bad input for the network code (a wrong spec, wrong array shapes); the message says how to fix it."""


@dataclass(frozen=True)
class NetworkSpec:
    """Size of a PolicyValueNet: `blocks` residual blocks, `channels` wide, `value_hidden` units in the value head."""

    blocks: int
    channels: int
    value_hidden: int = 64

    def __post_init__(self) -> None:
        for field_name, low, high in (("blocks", 0, 64), ("channels", 1, 1024), ("value_hidden", 1, 4096)):
            value = getattr(self, field_name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise NetworkError(
                    f"NetworkSpec.{field_name}={value!r} is invalid; use an integer in [{low}, {high}]"
                )

    def to_dict(self) -> dict[str, int]:
        """Plain dict (stored in model files)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "NetworkSpec":
        """Inverse of `to_dict`; NetworkError if keys are missing or unknown."""
        expected = {"blocks", "channels", "value_hidden"}
        if not isinstance(data, dict) or not {"blocks", "channels"} <= set(data) or not set(data) <= expected:
            raise NetworkError(f"network spec {data!r} must be a dict with keys {sorted(expected)}")
        return cls(**{k: int(v) for k, v in data.items()})

    @classmethod
    def parse(cls, text: str) -> "NetworkSpec":
        """Parse "BLOCKSxCHANNELS" or "BLOCKSxCHANNELSxVALUE_HIDDEN", e.g. "10x128"."""
        match = re.fullmatch(r"\s*(\d+)\s*x\s*(\d+)\s*(?:x\s*(\d+)\s*)?", text)
        if match is None:
            raise NetworkError(f"cannot parse network spec {text!r}; write BLOCKSxCHANNELS, e.g. '6x96'")
        blocks, channels, hidden = match.groups()
        return cls(int(blocks), int(channels), int(hidden) if hidden else 64)

    def __str__(self) -> str:
        return f"{self.blocks}x{self.channels} (value hidden {self.value_hidden})"


_FIXED_DEFAULTS = {
    "tictactoe": NetworkSpec(2, 32),
    "connect4": NetworkSpec(4, 64),
    "othello": NetworkSpec(6, 64),
    "othello-6x6": NetworkSpec(4, 64),
}


def _gomoku_board(game_name: str) -> tuple[int, int] | None:
    """(height, width) of a Gomoku preset or "gomoku-{H}x{W}-{n}" name, or None if not Gomoku."""
    if game_name == "gomoku-15":
        return 15, 15
    match = re.fullmatch(r"gomoku-(\d+)x(\d+)-(\d+)", game_name)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2))


def _gomoku_spec(height: int, width: int) -> NetworkSpec:
    """Gomoku default by board area (see the module table)."""
    area = height * width
    if area <= 49:
        return NetworkSpec(3, 32)
    if area <= 121:
        return NetworkSpec(4, 48)
    return NetworkSpec(10, 128)


def default_network_spec(game_name: str) -> NetworkSpec:
    """Default network size for a game name ("connect4", "gomoku-15", "go-9x9", ...); see the module table.

    NetworkError for a game without a default.
    """
    board = _gomoku_board(game_name)
    if board is not None:
        return _gomoku_spec(*board)
    go = re.fullmatch(r"go-(\d+)x\1", game_name)
    if go is not None:
        return NetworkSpec(6, 64) if int(go.group(1)) <= 9 else NetworkSpec(10, 128)
    if game_name in _FIXED_DEFAULTS:
        return _FIXED_DEFAULTS[game_name]
    raise NetworkError(
        f"no default network for game {game_name!r}; known: {sorted(_FIXED_DEFAULTS)}, gomoku-15, "
        f"gomoku-HxW-n and go-NxN; or give the size explicitly, e.g. NetworkSpec(blocks=4, channels=64)"
    )
