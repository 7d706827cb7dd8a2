"""shared.players.gtp_time: GTP's time_settings and time_left turned into the seconds of each move."""
from __future__ import annotations

import pytest

from shared.players.gtp_time import GtpTimeControl


def test_time_control_budgets():
    clock = GtpTimeControl()
    assert clock.budget(1, 40) is None                                           # no time settings
    clock.settings(0, 1, 0)
    assert clock.budget(1, 40) is None                                           # GTP's "no time limit"
    clock.settings(60, 0, 0)                                                     # sudden death
    assert clock.budget(1, 40) == pytest.approx(60 / 40 * 0.75 - 0.05)
    clock.spend(1, 30)
    assert clock.budget(1, 40) == pytest.approx(30 / 40 * 0.75 - 0.05)
    assert clock.budget(-1, 40) == pytest.approx(60 / 40 * 0.75 - 0.05)
    clock.settings(0, 10, 5)
    clock.time_left(1, 10.0, 5)                                                  # time_left b 10 5: byo-yomi
    assert clock.budget(1, 40) == pytest.approx(10 / 5 * 0.75 - 0.05)
    clock.time_left(1, 0.0, 0)                                                   # out of time: the least budget
    assert clock.budget(1, 40) == pytest.approx(10 / 5 * 0.75 - 0.05)           # the next period's share
    clock.settings(1, 0, 0)
    clock.spend(1, 5)
    assert clock.budget(1, 40) == pytest.approx(0.02)


def test_byo_yomi_periods_restart_after_their_stones():
    clock = GtpTimeControl()
    clock.settings(10, 30, 3)
    clock.spend(1, 12)                                                           # main time over: byo-yomi
    assert clock.left[1] == (30, 3)
    clock.spend(1, 5)
    assert clock.left[1] == (25, 2) and clock.budget(1, 40) == pytest.approx(25 / 2 * 0.75 - 0.05)
    clock.spend(1, 5)
    clock.spend(1, 5)                                                            # the third stone: a new period
    assert clock.left[1] == (30, 3)
    assert clock.budget(1, 5) == pytest.approx(30 / 3 * 0.75 - 0.05)
    clock.settings(100, 0, 0)
    assert clock.left == {} and clock.budget(-1, 5) == pytest.approx(100 / 10 * 0.75 - 0.05)   # at least 10 moves
