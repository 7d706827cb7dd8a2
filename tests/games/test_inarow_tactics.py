"""shared.games.inarow_tactics: rule-labelled win-in-1 and must-block positions are what their kind says."""
from __future__ import annotations

import numpy as np

from shared.games.inarow_tactics import line_tactic_positions


def test_line_tactic_positions_are_what_their_kind_says() -> None:
    from shared.games import make_game

    game = make_game("gomoku-6x6-4")
    states, kinds, outcomes = line_tactic_positions(game, 20, np.random.default_rng(0))
    assert states.shape == (40, game.state_size) and (kinds == 0).sum() == 20 and (kinds == 1).sum() == 20
    assert not game.is_terminal(states).any()
    np.testing.assert_array_equal(outcomes, np.where(game.legal_mask(states), game.move_outcomes(states), -2))
    assert (outcomes[kinds == 0] == 1).any(axis=1).all()
    block = outcomes[kinds == 1]
    assert not (block == 1).any() and (block == -1).any(axis=1).all() and (block == 0).any(axis=1).all()
