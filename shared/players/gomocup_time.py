"""The Gomocup time limits (what the manager's INFO lines say) and the seconds the next move may search.

`move_budget` takes the smaller of the per-move limit (timeout_turn) and a share of the match time left
(time_left over the moves still expected: half the empty squares, at least MIN_MOVES_LEFT), plans to use
BUDGET_SHARE of it and keeps OVERHEAD_S back for reading, writing and Python; None when neither limit was sent.
"""
from __future__ import annotations

from dataclasses import dataclass, field

#: Share of the per-move budget actually planned for searching (the rest absorbs timing noise).
BUDGET_SHARE = 0.8
#: Seconds kept back from every move for reading, writing and Python overhead.
OVERHEAD_S = 0.08
#: Moves assumed still to play when dividing the match time left (at least).
MIN_MOVES_LEFT = 10
#: The INFO keys that carry an integer, kept as fields of GomocupLimits.
INTEGER_INFO_KEYS = ("timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule")


@dataclass
class GomocupLimits:
    """What INFO told us, in milliseconds (None = not given). timeout_turn 0 means 'as fast as possible',
    timeout_match 0 means no match limit; keys other than INTEGER_INFO_KEYS are kept as text in `other`."""

    timeout_turn: int | None = None
    timeout_match: int | None = None
    time_left: int | None = None
    max_memory: int | None = None
    game_type: int | None = None
    rule: int = 0
    other: dict[str, str] = field(default_factory=dict)

    def note(self, key: str, value: str) -> None:
        """Keep one INFO line (key lower case): an integer for INTEGER_INFO_KEYS (ValueError if `value` is not
        one), the text otherwise."""
        if key in INTEGER_INFO_KEYS:
            setattr(self, key, int(value))
        else:
            self.other[key] = value

    def move_budget(self, empty_cells: int) -> float | None:
        """Seconds the next move may search with `empty_cells` empty squares on the board (module docstring);
        None: no time limit was given."""
        shares = []
        if self.timeout_turn is not None:
            shares.append(max(0.0, self.timeout_turn / 1000.0))
        if self.time_left is not None and self.timeout_match != 0:
            shares.append(max(0.0, self.time_left / 1000.0) / max(MIN_MOVES_LEFT, empty_cells // 2))
        if not shares:
            return None
        return max(0.0, min(shares) * BUDGET_SHARE - OVERHEAD_S)
