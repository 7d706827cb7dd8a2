"""Network size specifications and the per-game default sizes.

A `NetworkSpec` fixes the size of a `PolicyValueNet` trunk and value head; the board geometry
(input planes, height, width, action count) comes from the game, so one spec can serve any game.

Why these defaults (CPU-first: self-play workers run one torch thread each, so the net must be cheap
enough that the network is not hopelessly slower than the search bookkeeping):

=================  ===============  ===========================================================
game               blocks x chans   reason
=================  ===============  ===========================================================
tictactoe          2 x 32           9 cells; anything larger only slows learning a solved game
connect4           5 x 64           42 cells, ~6x6 receptive field needed to see 4-in-a-row
                                    threats across the board
gomoku-6x6-4       3 x 64           tiny board, short lines
gomoku-8x8-5       4 x 64           64 cells; four blocks cover the board with 3x3 convs
other gomoku       by board area    <=36 cells 3x64, <=64 4x64, <=144 5x64, larger 6x96
gomoku-15          6 x 96           225 cells; the largest net one CPU thread can self-play with
othello-6x6        4 x 64           36 cells but long-range flips
othello            6 x 64           64 cells, long-range flips need depth more than width
=================  ===============  ===========================================================

The "gpu" profile (`default_network_spec(name, profile="gpu")`) selects a larger net where a GPU
makes it affordable: 10 x 128 for gomoku boards with at least 15 x 15 cells ("gomoku-15-gpu"),
8 x 128 for 8 x 8 Othello; other games keep their CPU size (they are too small to profit).
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


PROFILES = ("cpu", "gpu")

_FIXED_DEFAULTS = {
    "tictactoe": NetworkSpec(2, 32, 32),
    "connect4": NetworkSpec(5, 64, 64),
    "othello": NetworkSpec(6, 64, 64),
    "othello-6x6": NetworkSpec(4, 64, 64),
}

_GPU_OVERRIDES = {"othello": NetworkSpec(8, 128, 128)}

#: The large Gomoku network for a GPU machine (name used in docs and BENCHMARKS.md).
GOMOKU_15_GPU_SPEC = NetworkSpec(10, 128, 128)


def _gomoku_board(game_name: str) -> tuple[int, int] | None:
    """(height, width) of a Gomoku preset or "gomoku-{H}x{W}-{n}" name, or None if not Gomoku."""
    if game_name == "gomoku-15":
        return 15, 15
    match = re.fullmatch(r"gomoku-(\d+)x(\d+)-(\d+)", game_name)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2))


def _gomoku_spec(height: int, width: int, profile: str) -> NetworkSpec:
    """Gomoku default by board area (see the module table)."""
    area = height * width
    if profile == "gpu" and area >= 225:
        return GOMOKU_15_GPU_SPEC
    if area <= 36:
        return NetworkSpec(3, 64, 64)
    if area <= 64:
        return NetworkSpec(4, 64, 64)
    if area <= 144:
        return NetworkSpec(5, 64, 64)
    return NetworkSpec(6, 96, 64)


def default_network_spec(game_name: str, profile: str = "cpu") -> NetworkSpec:
    """Default network size for a game name ("connect4", "gomoku-15", "gomoku-9x9-5", ...).

    profile: "cpu" (default, sized for one-thread CPU self-play) or "gpu" (larger where useful,
    e.g. 10x128 for gomoku-15). NetworkError for an unknown game or profile.
    """
    if profile not in PROFILES:
        raise NetworkError(f"unknown network profile {profile!r}; use one of {list(PROFILES)}")
    board = _gomoku_board(game_name)
    if board is not None:
        return _gomoku_spec(board[0], board[1], profile)
    if game_name in _FIXED_DEFAULTS:
        if profile == "gpu" and game_name in _GPU_OVERRIDES:
            return _GPU_OVERRIDES[game_name]
        return _FIXED_DEFAULTS[game_name]
    raise NetworkError(
        f"no default network for game {game_name!r}; known: {sorted(_FIXED_DEFAULTS)} and gomoku-15 / "
        f"gomoku-HxW-n; or give the size explicitly, e.g. NetworkSpec(blocks=4, channels=64)"
    )
