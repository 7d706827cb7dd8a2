"""Oracle sets from given positions (a run's own self-play, `bench oracle --from-shards`): the generic labelling
loop, and each family's builder against its solver and its own set's phase."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import family_of, make_game
from shared.games.base import F_PLY
from shared.games.oracle_set import label_given_positions
from shared.search.solved import UNKNOWN


def _random_positions(game, games: int, plies: int, seed: int) -> np.ndarray:
    """Every position of `games` uniformly random games cut after `plies` moves: [G * (plies + 1), S] int16
    (finished games repeat their last position)."""
    rng = np.random.default_rng(seed)
    states = game.initial_states(games)
    seen = [states]
    for _ in range(plies):
        live = ~game.is_terminal(states)
        legal = game.legal_mask(states[live])
        moves = np.where(legal, rng.random(legal.shape), -1.0).argmax(axis=1)
        states = states.copy()
        states[live] = game.step(states[live], moves)
        seen.append(states)
    return np.concatenate(seen)


def test_label_given_positions_keeps_settled_unlost_distinct_positions_and_stops_when_they_run_out():
    game = make_game("tictactoe")
    states = _random_positions(game, 6, 3, seed=0)
    distinct = np.unique(states, axis=0)
    first_cell = {tuple(s): i for i, s in enumerate(distinct)}

    def label(state):                      # a stand-in labeller: lost, over budget or winning by position
        kind = first_cell[tuple(state)] % 3
        values = np.full(game.num_actions, -1, np.int64)
        if kind == 1:
            values[0] = UNKNOWN
        elif kind == 2:
            values[4] = 1
        return values

    kept, values, labelled, skipped = label_given_positions(game, np.concatenate([states, states]), 10_000, 3, label)
    assert labelled == len(distinct) and skipped == sum(i % 3 == 1 for i in range(len(distinct)))
    assert len(kept) == sum(i % 3 == 2 for i in range(len(distinct))) and values.shape == (len(kept), 9)
    assert len(np.unique(kept, axis=0)) == len(kept) and (values.max(axis=1) == 1).all()
    few, _, labelled_few, _ = label_given_positions(game, states, 2, 3, label)
    again, _, _, _ = label_given_positions(game, states, 2, 3, label)
    assert len(few) == 2 and labelled_few < labelled and np.array_equal(few, again)
    none, none_values, _, _ = label_given_positions(game, states[:0], 5, 0, label)
    assert none.shape == (0, game.state_size) and none_values.shape == (0, game.num_actions)


def test_tictactoe_labels_of_given_positions_are_its_own_sets_labels():
    game = make_game("tictactoe")
    family = family_of(game)
    everything = family.oracle_set(game, 100_000, 0)
    cells = game.num_cells                 # keyed by the board: a state also records its last move
    by_state = {s[:cells].tobytes(): (k, o) for s, k, o in zip(everything.states, everything.keeps, everything.optimal)}
    given = family.oracle_set_from_positions(game, _random_positions(game, 30, 9, seed=1), 25, 4)
    assert len(given) == 25 and "given positions" in given.source
    for state, keeps, optimal in zip(given.states, given.keeps, given.optimal):
        assert np.array_equal(by_state[state[:cells].tobytes()][0], keeps)
        assert np.array_equal(by_state[state[:cells].tobytes()][1], optimal)


@pytest.mark.parametrize("name", ["connect4", "othello-6x6"])
def test_solver_labels_of_given_positions_agree_with_the_solver_in_the_sets_phase(name):
    game = make_game(name)
    if name == "connect4":
        from shared.games.connect4.oracle import ORACLE_PLIES
        from shared.games.connect4.solver import Connect4Solver
        label, (low, high) = Connect4Solver(max_nodes=300_000).state_values, ORACLE_PLIES
        given = _random_positions(game, 6, 24, seed=2)
    else:
        from shared.games.othello.oracle import ORACLE_EMPTIES
        from shared.games.othello.solver import OthelloSolver
        label, (low, high) = OthelloSolver(game).move_values, ORACLE_EMPTIES[6]
        given = _random_positions(game, 4, 24, seed=2)

    def phase(states):                     # plies played (Connect Four) or empty squares left (Othello)
        if name == "connect4":
            return states[:, game.num_cells + F_PLY]
        return (states[:, :game.num_cells] == 0).sum(axis=1)

    oracle = family_of(game).oracle_set_from_positions(game, given, 5, 0)
    assert 1 <= len(oracle) <= 5 and "given positions" in oracle.source
    assert ((phase(oracle.states) >= low) & (phase(oracle.states) <= high)).all()
    assert not game.is_terminal(oracle.states).any()
    assert {s.tobytes() for s in oracle.states} <= {s.tobytes() for s in given}
    for state, keeps in zip(oracle.states, oracle.keeps):
        values = label(state)
        assert values.max() >= 0 and np.array_equal(keeps, values == values.max())


def test_gomoku_and_go_label_no_given_positions():
    assert family_of(make_game("gomoku-6x6-4")).oracle_set_from_positions is None
    assert family_of(make_game("go-7x7")).oracle_set_from_positions is None
