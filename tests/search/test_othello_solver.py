"""The exact Othello endgame solver against an independent brute force over the game's numpy rules, and the root
endgame solver of the match players and analysis."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games.random_positions import random_endgame
from shared.games import make_game
from shared.games.base import F_DONE, F_PLAYER, F_WINNER, GameError
from shared.players.analysis import analyze_states
from shared.players.player import MCTSPlayer
from shared.search import SearchConfig
from shared.games.othello.solver import OthelloSolver
from shared.games.othello.root import ROOT_ENDGAME_EMPTIES, endgame_root_moves
from shared.search.root_solver import uses_root_solver
from shared.search.solved import DRAW, ILLEGAL, LOSS, UNKNOWN, WIN

OTHELLO = make_game("othello")
OTHELLO_6 = make_game("othello-6x6")


def perfect_winners(game, states: np.ndarray) -> np.ndarray:
    """Winner with perfect play of each state [N, S] (+1 black, -1 white, 0 draw): full minimax over game.step,
    black maximising and white minimising, one ply of the whole batch at a time."""
    base = game.num_cells
    winners = np.zeros(states.shape[0], np.int64)
    over = states[:, base + F_DONE] != 0
    winners[over] = states[over, base + F_WINNER]
    live = np.flatnonzero(~over)
    if live.size:
        rows, actions = np.nonzero(game.legal_mask(states[live]))
        children = perfect_winners(game, game.step(states[live][rows], actions))
        for i, row in enumerate(live):
            mine = children[rows == i]
            winners[row] = mine.max() if states[row, base + F_PLAYER] == 1 else mine.min()
    return winners


def brute_force_values(game, state: np.ndarray) -> np.ndarray:
    """Value of every action of one state for its side to move: [A] int64 (ILLEGAL for illegal actions)."""
    legal = np.flatnonzero(game.legal_mask(state[None])[0])
    values = np.full(game.num_actions, ILLEGAL, np.int64)
    mover = int(state[game.num_cells + F_PLAYER])
    values[legal] = perfect_winners(game, game.step(np.repeat(state[None], legal.size, axis=0), legal)) * mover
    return values


def board(game, rows: list[str], black_to_move: bool = True) -> np.ndarray:
    """A state from text rows ('X' black, 'O' white, '.' empty), not over; the side to move as given."""
    state = game.initial_states(1)[0].copy()
    cells = np.array([[{"X": 1, "O": -1, ".": 0}[ch] for ch in row] for row in rows], np.int16)
    state[: game.num_cells] = cells.reshape(-1)
    state[game.num_cells + F_PLAYER] = 1 if black_to_move else -1
    return state


@pytest.mark.integration   # a brute force over whole endgames
@pytest.mark.parametrize("game,empties,count", [(OTHELLO, 8, 12), (OTHELLO_6, 9, 12)], ids=["8x8", "6x6"])
def test_move_values_match_a_brute_force_over_the_rules(game, empties, count):
    rng = np.random.default_rng(7)
    solver = OthelloSolver(game, max_nodes=10_000_000)
    seen = set()
    for _ in range(count):
        state = random_endgame(game, rng, empties)
        expected = brute_force_values(game, state)
        assert solver.move_values(state).tolist() == expected.tolist()
        seen.update(expected[expected != ILLEGAL].tolist())
    assert seen == {WIN, DRAW, LOSS} or seen >= {WIN, LOSS}      # the sample holds both wins and losses


def test_each_move_value_agrees_with_a_fresh_solve_of_the_position_after_it():
    # Deeper than the brute force reaches, where the transposition table is in play: the value of a move is minus
    # the best value of the position it leads to, solved by a second solver with an empty table.
    rng = np.random.default_rng(4)
    solver = OthelloSolver(OTHELLO)
    for _ in range(4):
        state = random_endgame(OTHELLO, rng, 13)
        values = solver.move_values(state)
        for action in np.flatnonzero(values != ILLEGAL):
            child = OTHELLO.step(state[None], np.array([action]))[0]
            if child[OTHELLO.num_cells + F_DONE]:
                expected = int(child[OTHELLO.num_cells + F_WINNER]) * int(state[OTHELLO.num_cells + F_PLAYER])
            else:
                expected = -int(OthelloSolver(OTHELLO).move_values(child).max())
            assert values[action] == expected


def draw_rich_endgames(game, rng, empties: int, count: int) -> list[np.ndarray]:
    """`count` random endgames [S] int16 with `empties` empty squares where some move draws and another does not
    (judged by a solver without a table): the positions where a draw narrows the alpha-beta window, so that a
    bound proven under it differs from an exact value."""
    plain = OthelloSolver(game, max_nodes=50_000_000, table_min_empties=64)
    found = []
    for _ in range(200 * count):
        state = random_endgame(game, rng, empties)
        values = plain.move_values(state)
        legal = values[values != ILLEGAL]
        if DRAW in legal and (legal != DRAW).any():
            found.append(state)
            if len(found) == count:
                return found
    raise AssertionError(f"fewer than {count} draw-rich endgames in the sample")


def test_a_table_holding_every_position_matches_the_brute_force_where_draws_narrow_the_window():
    # With table_min_empties=0 every node stores and reads bounds, at depths the brute force reaches; one solver
    # for all positions, so entries from earlier solves are read as well.
    rng = np.random.default_rng(5)
    solver = OthelloSolver(OTHELLO_6, max_nodes=10_000_000, table_min_empties=0)
    for state in draw_rich_endgames(OTHELLO_6, rng, 8, 6):
        assert solver.move_values(state).tolist() == brute_force_values(OTHELLO_6, state).tolist()


@pytest.mark.parametrize("game,empties", [(OTHELLO, 12), (OTHELLO_6, 12)], ids=["8x8", "6x6"])
def test_the_table_changes_no_value_deeper_down(game, empties):
    # Deeper than the brute force reaches: the default table (kept warm across positions, as in the players) and a
    # table at every node against plain alpha-beta, on positions where draws and non-draws meet.
    rng = np.random.default_rng(9)
    plain = OthelloSolver(game, max_nodes=50_000_000, table_min_empties=64)
    tabled = [OthelloSolver(game, max_nodes=50_000_000), OthelloSolver(game, max_nodes=50_000_000, table_min_empties=0)]
    for state in draw_rich_endgames(game, rng, empties, 10):
        expected = plain.move_values(state).tolist()
        for solver in tabled:
            assert solver.move_values(state).tolist() == expected


def test_a_side_without_a_move_can_only_pass_and_the_pass_is_solved():
    # One empty square, h8: black cannot outflank anything from it (every line from h8 holds only white discs up to
    # the edge, or its own disc on g8), white can (g8); so black passes, white fills the board and wins.
    rows = ["OXOOOOOO"] + ["OOOOOOOO"] * 6 + ["OOOOOOX."]
    state = board(OTHELLO, rows, black_to_move=True)
    legal = OTHELLO.legal_mask(state[None])[0]
    assert legal.tolist() == [False] * 64 + [True]
    values = OthelloSolver(OTHELLO).move_values(state)
    assert values.tolist() == brute_force_values(OTHELLO, state).tolist()
    assert values[:64].tolist() == [ILLEGAL] * 64 and values[64] == LOSS


def test_the_6x6_board_keeps_to_its_own_squares():
    # On 6x6, a line must not run off column 6 or row 6 onto squares of the 8-wide layout the board lacks.
    rows = ["OOOOOX", "OOOOOX", "OOOOOX", "OOOOOX", "OOOOO.", "XXXXX."]
    state = board(OTHELLO_6, rows, black_to_move=True)
    assert OthelloSolver(OTHELLO_6).move_values(state).tolist() == brute_force_values(OTHELLO_6, state).tolist()


def test_a_search_past_the_budget_is_unknown_never_guessed():
    state = random_endgame(OTHELLO, np.random.default_rng(3), 20)
    values = OthelloSolver(OTHELLO, max_nodes=50).move_values(state)
    legal = OTHELLO.legal_mask(state[None])[0]
    assert np.all(values[~legal] == ILLEGAL)
    assert np.any(values[legal] == UNKNOWN)


def test_bad_input_is_refused_with_a_clear_error():
    with pytest.raises(GameError, match="solves Othello positions"):
        OthelloSolver(make_game("connect4"))
    with pytest.raises(ValueError, match="max_nodes"):
        OthelloSolver(OTHELLO, max_nodes=0)
    with pytest.raises(ValueError, match="table_min_empties"):
        OthelloSolver(OTHELLO, table_min_empties=65)
    finished = random_endgame(OTHELLO, np.random.default_rng(0), 4).copy()
    finished[OTHELLO.num_cells + F_DONE] = 1
    with pytest.raises(GameError, match="game is over"):
        OthelloSolver(OTHELLO).move_values(finished)


class UniformEvaluator:
    """A network that knows nothing: flat priors, value 0."""

    def __init__(self, game):
        self.game = game

    def __call__(self, states):
        return np.zeros((states.shape[0], self.game.num_actions), np.float32), np.zeros(states.shape[0], np.float32)


def decided_endgames(count: int, empties: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions where some moves win and some lose: (states [N, S] int16, solver values [N, A] int64)."""
    rng = np.random.default_rng(11)
    solver = OthelloSolver(OTHELLO)
    states, values = [], []
    while len(states) < count:
        state = random_endgame(OTHELLO, rng, empties)
        moves = solver.move_values(state)
        if WIN in moves and LOSS in moves:
            states.append(state)
            values.append(moves)
    return np.stack(states), np.stack(values)


def test_the_root_solver_replaces_a_losing_move_with_the_most_visited_win():
    states, values = decided_endgames(6, 10)
    losing = np.array([np.flatnonzero(v == LOSS)[0] for v in values], np.int64)
    visits = np.random.default_rng(0).random((states.shape[0], OTHELLO.num_actions)).astype(np.float32)
    chosen = endgame_root_moves(OTHELLO, states, losing, visits)
    for row, action in enumerate(chosen):
        wins = np.flatnonzero(values[row] == WIN)
        assert action == wins[np.argmax(visits[row, wins])]
    # a winning move is kept as it is
    winning = np.array([np.flatnonzero(v == WIN)[-1] for v in values], np.int64)
    assert endgame_root_moves(OTHELLO, states, winning, visits).tolist() == winning.tolist()


def test_positions_with_more_empty_squares_are_left_to_the_search():
    state = random_endgame(OTHELLO, np.random.default_rng(5), ROOT_ENDGAME_EMPTIES + 8)
    action = np.flatnonzero(OTHELLO.legal_mask(state[None])[0])[:1]
    assert endgame_root_moves(OTHELLO, state[None], action, np.zeros((1, 65), np.float32)).tolist() == action.tolist()


def test_match_players_and_analysis_play_a_solved_win():
    assert uses_root_solver(OTHELLO) and uses_root_solver(OTHELLO_6) and not uses_root_solver(make_game("connect4"))
    states, values = decided_endgames(8, 12)
    search = SearchConfig(num_simulations=2)
    player = MCTSPlayer(OTHELLO, UniformEvaluator(OTHELLO), search)
    played = player.select_actions(states)
    analysed = [a.action for a in analyze_states(OTHELLO, UniformEvaluator(OTHELLO), states, search=search)]
    for action_list in (played, analysed):
        assert all(values[row, a] == WIN for row, a in enumerate(action_list))
    # without the root solver, two simulations of a network that knows nothing miss some of those wins
    alone = [a.action for a in analyze_states(OTHELLO, UniformEvaluator(OTHELLO), states, search=search,
                                              root_solver=False)]
    assert any(values[row, a] != WIN for row, a in enumerate(alone))
