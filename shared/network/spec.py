"""Network size specifications and the per-game default sizes.

A `NetworkSpec` fixes the size of a `PolicyValueNet` trunk and value head; the board geometry
(input planes, height, width, action count) comes from the game, so one spec can serve any game.
`default_network_spec(name)` is the only place the rest of zeroforge asks how large a game's network is: the
pipeline's config defaults ([game] blocks/channels), `create_model(spec=None)` and `zeroforge bench` all read it.
It reads each game family's `GameFamily.network_size` (shared.games.family), which gives these sizes for the
built-in games:

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

Three optional parts, off in every default size: `ownership` adds an ownership head, an auxiliary training target
for games with territory (Go), and `global_pool` makes every third residual block a global-pooling block
(shared.network.resnet) (KataGo's helpers, Wu 2019; measured for Go in BENCHMARKS.md); `line_planes` adds two input
planes of the immediate winning cells in in-a-row games (shared.network.inputs). A spec with none of them stores
exactly the three sizes, so its model files read in older versions too.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from shared.games import families


#: The optional parts of a spec (each stored in a model file only when on).
_PARTS = ("ownership", "global_pool", "line_planes")


class NetworkError(ValueError):
    """Bad input for the network code (a wrong spec, wrong array shapes); the message says how to fix it."""


@dataclass(frozen=True)
class NetworkSpec:
    """Size of a PolicyValueNet: `blocks` residual blocks, `channels` wide, `value_hidden` units in the value head;
    `ownership`: with an ownership head; `global_pool`: with global-pooling blocks; `line_planes`: with the two
    winning-cell input planes (module docstring)."""

    blocks: int
    channels: int
    value_hidden: int = 64
    ownership: bool = False
    global_pool: bool = False
    line_planes: bool = False

    def __post_init__(self) -> None:
        for field_name, low, high in (("blocks", 0, 64), ("channels", 1, 1024), ("value_hidden", 1, 4096)):
            value = getattr(self, field_name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise NetworkError(
                    f"NetworkSpec.{field_name}={value!r} is invalid; use an integer in [{low}, {high}]"
                )
        for field_name in _PARTS:
            if not isinstance(getattr(self, field_name), bool):
                raise NetworkError(f"NetworkSpec.{field_name}={getattr(self, field_name)!r} must be true or false")
        if self.global_pool and (self.blocks < 1 or self.channels < 4):
            raise NetworkError(f"global pooling needs at least 1 block of 4 channels, got {self.blocks}x{self.channels}")

    def to_dict(self) -> dict[str, int | bool]:
        """Plain dict (stored in model files); the optional parts appear only when on."""
        data = asdict(self)
        for field_name in _PARTS:
            if not data[field_name]:
                del data[field_name]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "NetworkSpec":
        """Inverse of `to_dict`; NetworkError if keys are missing or unknown."""
        sizes, parts = {"blocks", "channels", "value_hidden"}, set(_PARTS)
        if not isinstance(data, dict) or not {"blocks", "channels"} <= set(data) or not set(data) <= sizes | parts:
            raise NetworkError(f"network spec {data!r} must be a dict with keys {sorted(sizes)} "
                               f"(optional: {sorted(parts)})")
        return cls(**{k: (v if k in parts else int(v)) for k, v in data.items()})

    @classmethod
    def parse(cls, text: str) -> "NetworkSpec":
        """Parse "BLOCKSxCHANNELS" or "BLOCKSxCHANNELSxVALUE_HIDDEN", e.g. "10x128"."""
        match = re.fullmatch(r"\s*(\d+)\s*x\s*(\d+)\s*(?:x\s*(\d+)\s*)?", text)
        if match is None:
            raise NetworkError(f"cannot parse network spec {text!r}; write BLOCKSxCHANNELS, e.g. '6x96'")
        blocks, channels, hidden = match.groups()
        return cls(int(blocks), int(channels), int(hidden) if hidden else 64)

    def __str__(self) -> str:
        parts = [name for name, on in (("ownership head", self.ownership), ("global pooling", self.global_pool),
                                       ("line planes", self.line_planes)) if on]
        return f"{self.blocks}x{self.channels} (value hidden {self.value_hidden}{''.join(', ' + p for p in parts)})"


def default_network_spec(game_name: str) -> NetworkSpec:
    """Default network size for a game name ("connect4", "gomoku-15", "go-9x9", ...): the game family's
    `network_size` (module table). NetworkError for a game without a default."""
    for family in families().values():
        size = family.network_size(game_name)
        if size is not None:
            return NetworkSpec(*size)
    known = ", ".join(form for family in families().values() for form in family.name_forms)
    raise NetworkError(
        f"no default network for game {game_name!r}; known: {known}; or give the size explicitly, "
        "e.g. NetworkSpec(blocks=4, channels=64)"
    )
