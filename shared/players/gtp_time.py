"""GTP's time bookkeeping: what `time_settings` and `time_left` say, and the seconds the next move may search.

Each move gets a share of the colour's remaining time: in main time, the time left over the moves still expected
(at least MIN_MOVES_LEFT; never less than one byo-yomi stone's share when there is byo-yomi), in byo-yomi the
period's time over its stones; the search plans to use TIME_SAFETY of it, less TIME_OVERHEAD seconds for the
answer to travel, and never less than MIN_MOVE_TIME. Without time settings, or with GTP's "no limit" convention
(byo-yomi time > 0 with 0 stones), there is no budget.
"""
from __future__ import annotations

from dataclasses import dataclass, field

#: Share of a move's time the search may use, and seconds kept back for the answer to travel.
TIME_SAFETY, TIME_OVERHEAD = 0.75, 0.05
#: The least time budget of one move, in seconds.
MIN_MOVE_TIME = 0.02
#: The least number of moves the main time is spread over.
MIN_MOVES_LEFT = 10


@dataclass
class GtpTimeControl:
    """GTP time settings and the time left per colour (+1 black, -1 white): (seconds, stones; 0 stones = main time)."""

    main_time: float | None = None          # None: no time_settings received
    byo_yomi_time: float = 0.0
    byo_yomi_stones: int = 0
    left: dict[int, tuple[float, int]] = field(default_factory=dict)

    @property
    def unlimited(self) -> bool:
        """No time limit: no settings, or GTP's 'byo-yomi time > 0 with 0 stones' convention."""
        return self.main_time is None or (self.byo_yomi_time > 0 and self.byo_yomi_stones == 0)

    def settings(self, main_time: float, byo_yomi_time: float, byo_yomi_stones: int) -> None:
        """`time_settings MAIN BYO_YOMI_TIME BYO_YOMI_STONES` (seconds, seconds, stones): forgets the times left."""
        self.main_time, self.byo_yomi_time, self.byo_yomi_stones = main_time, byo_yomi_time, byo_yomi_stones
        self.left.clear()

    def time_left(self, colour: int, seconds: float, stones: int) -> None:
        """`time_left COLOUR SECONDS STONES`: the controller's count for `colour` (+1 / -1; 0 stones = main time)."""
        self.left[colour] = (float(seconds), int(stones))

    def budget(self, colour: int, moves_left: int) -> float | None:
        """Seconds the next move of `colour` may search, with about `moves_left` moves of it still to come
        (None: no limit)."""
        if self.unlimited:
            return None
        seconds, stones = self.left.get(colour, (self.main_time, 0))
        if stones > 0:
            share = seconds / stones
        else:
            share = seconds / max(moves_left, MIN_MOVES_LEFT)
            if self.byo_yomi_stones > 0:
                share = max(share, self.byo_yomi_time / self.byo_yomi_stones)
        return max(MIN_MOVE_TIME, share * TIME_SAFETY - TIME_OVERHEAD)

    def spend(self, colour: int, seconds: float) -> None:
        """Count a move's thinking time against `colour` until the controller's next time_left says otherwise."""
        if self.unlimited:
            return
        left, stones = self.left.get(colour, (self.main_time, 0))
        if stones > 0:
            left, stones = left - seconds, stones - 1
            if stones == 0:
                left, stones = self.byo_yomi_time, self.byo_yomi_stones
        else:
            left -= seconds
            if left <= 0 and self.byo_yomi_stones > 0:
                left, stones = self.byo_yomi_time, self.byo_yomi_stones
        self.left[colour] = (max(left, 0.0), stones)
