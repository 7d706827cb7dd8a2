"""MCTS-solver: wins in one are taken and must-blocks are found with a handful of simulations whatever the prior
says; proven results agree with exact minimax; the move chooser plays them; the game tactics are exact."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import Game
from shared.players.player import MCTSPlayer
from shared.search import BatchedMCTS, SearchConfig, SearchResult, choose_moves, select_actions
from shared.games.tictactoe.minimax import move_values, solve_values
from tests.search.helpers import HashEvaluator, UniformEvaluator, check_tree_invariants


class AdversarialEvaluator:
    """Puts almost all prior mass on `favourite` (the lowest legal action not in `avoid` [A] bool, if None) and
    calls every position a near-certain win for the side to move: exactly the evaluator that misses tactics."""

    def __init__(self, game: Game, avoid: np.ndarray) -> None:
        self.game, self.avoid = game, avoid

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        legal = self.game.legal_mask(states)
        logits = np.zeros(legal.shape, np.float32)
        wrong = np.where(legal & ~self.avoid[None, :], 1, 0).argmax(axis=1)
        logits[np.arange(len(states)), wrong] = 20.0                     # prior ~ 1 - 1e-8 on a wrong move
        return logits, np.full(len(states), 0.9, np.float32)


def _search(game: Game, state: np.ndarray, evaluate, sims: int, **config) -> tuple[BatchedMCTS, SearchResult]:
    mcts = BatchedMCTS(game, evaluate, SearchConfig(num_simulations=sims, **config), np.random.default_rng(0))
    return mcts, mcts.search(state, add_noise=False)


# (game, moves to the position, the winning move for the side to move) -- the side to move wins in one.
WIN_IN_ONE = [
    ("tictactoe", "1425", "3"),                    # X: 1 2, O: 4 5 -> X completes the top row
    ("connect4", "414243", "4"),                   # X: three discs in column 4 -> the fourth
    ("gomoku-6x6-4", "a1 a6 b1 b6 c1 f6", "d1"),
    ("gomoku-8x8-5", "a1 a8 b1 b8 c1 c8 d1 h8", "e1"),
    ("gomoku-15", "h8 g8 i8 a15 j8 b15 k8 c15", "l8"),          # g8 taken by O: only l8 wins
]

# (game, moves to the position, the only move that does not lose at once) -- the opponent threatens a win.
MUST_BLOCK = [
    ("tictactoe", "152", "3"),                     # X: 1 2, O: 5 -> O must take 3
    ("connect4", "21374", "5"),                    # X: 2 3 4 on the bottom row, O holds 1 -> O must play 5
    ("gomoku-6x6-4", "a1 a6 b1 f6 c1", "d1"),
    ("gomoku-8x8-5", "a1 a8 b1 b8 c1 c8 d1", "e1"),
    ("gomoku-15", "h8 g8 i8 a15 j8 b15 k8", "l8"),              # g8 held by O: a four with one end
]


@pytest.mark.parametrize("game_name, moves, winning", WIN_IN_ONE)
@pytest.mark.parametrize("sims", [2, 8])
def test_win_in_one_is_taken_whatever_the_prior(game_name: str, moves: str, winning: str, sims: int) -> None:
    game = make_game(game_name)
    state = game.play_moves(game.parse_moves(moves))
    win = game.parse_action(winning)
    assert np.flatnonzero(game.winning_moves(state)[0]).tolist() == [win]
    avoid = np.zeros(game.num_actions, bool)
    avoid[win] = True
    mcts, result = _search(game, state, AdversarialEvaluator(game, avoid), sims)
    assert result.proven[0, win] == 1 and result.proven_value[0] == 1
    assert choose_moves(result, 1.0, np.random.default_rng(0))[0] == win      # even at temperature 1
    assert result.visits[0, win] >= 1                                         # selection takes the win at once
    check_tree_invariants(mcts._tree, 0)
    player = MCTSPlayer(game, AdversarialEvaluator(game, avoid), SearchConfig(num_simulations=sims))
    assert player.select_actions(state)[0] == win


@pytest.mark.parametrize("game_name, moves, block", MUST_BLOCK)
@pytest.mark.parametrize("sims", [2, 8])
def test_must_block_is_found_whatever_the_prior(game_name: str, moves: str, block: str, sims: int) -> None:
    game = make_game(game_name)
    state = game.play_moves(game.parse_moves(moves))
    blocking = game.parse_action(block)
    avoid = np.zeros(game.num_actions, bool)
    avoid[blocking] = True
    mcts, result = _search(game, state, AdversarialEvaluator(game, avoid), sims)
    legal = game.legal_mask(state)[0]
    others = legal.copy()
    others[blocking] = False
    assert (result.proven[0, others] == -1).all() and result.proven[0, blocking] != -1
    assert (result.visits[0, others] == 0).all()                   # never walks into a proven loss
    for temperature in (0.0, 1.0):
        assert choose_moves(result, temperature, np.random.default_rng(1))[0] == blocking
    check_tree_invariants(mcts._tree, 0)
    # Without the solver the adversarial prior wins: the search plays into the loss.
    _, blind = _search(game, state, AdversarialEvaluator(game, avoid), sims, solver=False)
    assert blind.visits[0].argmax() != blocking and not blind.proven.any()


def _random_positions(game: Game, count: int, plies: range, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        state = game.initial_states(1)
        for _ in range(rng.integers(plies.start, plies.stop)):
            if game.is_terminal(state)[0]:
                break
            state = game.step(state, np.array([rng.choice(np.flatnonzero(game.legal_mask(state)[0]))]))
        if not game.is_terminal(state)[0]:
            found.append(state[0])
    return np.stack(found)


def test_proven_results_agree_with_exact_minimax_on_tictactoe() -> None:
    """Every node the solver proves, at any depth, has that exact minimax value; near the end of the game the
    root is fully solved."""
    game = make_game("tictactoe")
    exact = solve_values(game)                             # board bytes -> value for the side to move
    states = _random_positions(game, 40, range(2, 8), seed=3)
    mcts = BatchedMCTS(game, UniformEvaluator(game), SearchConfig(num_simulations=300, reuse_tree=False),
                       np.random.default_rng(0))
    result = mcts.search(states, add_noise=False)
    tree = mcts._tree
    proven_nodes = 0
    for row in range(len(states)):
        check_tree_invariants(tree, row)
        for node in tree.nodes_in_use(row):
            verdict = int(tree.nodes["proven"][row, node])
            if verdict:
                key = tree.node_states[row, node, : game.num_cells].tobytes()
                assert exact[key] == verdict, (row, node)
                proven_nodes += 1
        values = move_values(game, states[row: row + 1])[0]
        proven = result.proven[row]
        assert (values[proven == 1] == 1).all() and (values[proven == -1] == -1).all()
        if result.proven_value[row]:
            assert result.proven_value[row] == values.max()
        empty = int((states[row, : game.num_cells] == 0).sum())
        if empty <= 5 and values.max() != 0:              # a decided position close to the end: fully proven
            assert result.proven_value[row] == values.max(), game.render(states[row])
    assert proven_nodes > 100


def test_proven_losses_propagate_to_the_root() -> None:
    """Lost tic-tac-toe positions (every move loses, most of them not at once): the root is proven lost, each of its
    moves is proven lost, and the search value says so."""
    game = make_game("tictactoe")
    exact = solve_values(game)
    states = _random_positions(game, 400, range(3, 7), seed=5)
    lost = [s for s in states if exact[s[: game.num_cells].tobytes()] == -1
            and (game.move_outcomes(s[None])[0] == 0).any()]      # not every move loses at once
    assert len(lost) >= 3
    for state in lost[:6]:
        mcts, result = _search(game, state[None], UniformEvaluator(game), 300)
        legal = game.legal_mask(state[None])[0]
        assert result.proven_value[0] == -1, game.render(state)
        assert (result.proven[0][legal] == -1).all()
        assert result.root_value[0] < 0
        check_tree_invariants(mcts._tree, 0)


def test_choose_moves_plays_wins_avoids_losses_and_otherwise_follows_the_visits() -> None:
    visits = np.array([[10, 2, 0, 5], [10, 2, 0, 5], [10, 2, 0, 5], [10, 2, 0, 5]], np.float32)
    prior = np.full((4, 4), 0.25, np.float32)
    proven = np.array([[0, 1, 0, 0], [-1, 0, 0, 0], [-1, -1, 0, -1], [0, 0, 0, 0]], np.int8)
    result = SearchResult(visits, np.zeros(4, np.float32), np.zeros((4, 4), np.float32), prior, proven=proven,
                          proven_value=np.array([1, 0, 0, 0], np.int8))
    actions = choose_moves(result, 0.0, np.random.default_rng(0))
    assert actions.tolist() == [1, 3, 2, 0]          # the win; most visited safe; the only unlost (unvisited) move
    for seed in range(20):                            # at temperature 1 a lost move is never sampled
        sampled = choose_moves(result, 1.0, np.random.default_rng(seed))
        assert sampled[0] == 1 and sampled[1] in (1, 3) and sampled[2] == 2
    plain = SearchResult(visits, np.zeros(4, np.float32), np.zeros((4, 4), np.float32), prior)
    for temperature in (0.0, 1.0):                    # no proofs: exactly select_actions, same draws
        np.testing.assert_array_equal(choose_moves(plain, temperature, np.random.default_rng(5)),
                                      select_actions(visits, temperature, np.random.default_rng(5)))


def test_solver_off_reports_nothing_and_keeps_the_old_search() -> None:
    game = make_game("tictactoe")
    state = game.play_moves(game.parse_moves("1425"))
    _, result = _search(game, state, HashEvaluator(game), 30, solver=False)
    assert not result.proven.any() and not result.proven_value.any()
    assert result.proven.shape == (1, 9) and result.proven.dtype == np.int8


def test_generic_games_get_root_wins_from_the_default_tactics() -> None:
    """Othello has no fast move outcomes: the generic Game.winning_moves (stepping each legal move) still makes the
    root take a game-ending win that the prior ignores."""
    game = make_game("othello-6x6")
    assert not game.fast_move_outcomes
    rng = np.random.default_rng(0)
    for _ in range(200):
        state = game.initial_states(1)
        while not game.is_terminal(state)[0] and not game.winning_moves(state).any():
            state = game.step(state, np.array([rng.choice(np.flatnonzero(game.legal_mask(state)[0]))]))
        if not game.is_terminal(state)[0]:
            break
    wins = game.winning_moves(state)[0]
    assert wins.any()
    mcts, result = _search(game, state, AdversarialEvaluator(game, wins), 4)
    assert result.proven_value[0] == 1 and wins[choose_moves(result, 1.0, rng)[0]]
    check_tree_invariants(mcts._tree, 0)


@pytest.mark.parametrize("game_name,count", [("tictactoe", 150), ("connect4", 150), ("gomoku-6x6-4", 150),
                                             ("gomoku-7x9-4", 150), ("gomoku-8x8-5", 150), ("gomoku-9x9-5", 60),
                                             ("gomoku-5x19-5", 40), ("gomoku-8x8-6", 60), ("gomoku-9x9-3", 60),
                                             ("gomoku-10x10-6", 40)])
def test_fast_move_outcomes_equal_the_generic_definition(game_name: str, count: int) -> None:
    """The in-a-row and Connect Four overrides agree with stepping every move (and every reply) on random games
    (boards of at most 64 cells use the bitboard kernel, the larger ones the row-mask kernel; each kernel has a copy
    for the common line lengths and a general one, all taken here)."""
    game = make_game(game_name)
    states = _random_positions(game, count, range(4, game.num_cells), seed=11)
    fast = game.move_outcomes(states)
    np.testing.assert_array_equal(game.winning_moves(states), Game.winning_moves(game, states))
    rows, actions = np.nonzero(game.legal_mask(states))
    children = game.step(states[rows], actions)
    opponent_wins = Game.winning_moves(game, children).any(axis=1) & ~game.is_terminal(children)
    exact = np.zeros_like(fast)
    exact[rows, actions] = np.where(Game.winning_moves(game, states)[rows, actions], 1,
                                    np.where(opponent_wins, -1, 0))
    np.testing.assert_array_equal(fast, exact)
    assert (exact == -1).any() and (exact == 1).any()


def test_a_lost_side_still_blocks_what_it_can() -> None:
    """gomoku-6x6-4, O to move: X threatens b4 (c4-d4-e4, f4 is O's) and, once O blocks there, makes two winning
    cells with e2 or b2 next to c2-d2. Every O move is proven lost (3000 simulations prove it), and the most visited
    move is not the block, but the player still blocks b4 instead of a move after which X completes four at once."""
    game = make_game("gomoku-6x6-4")
    state = game.play_moves(game.parse_moves("c4 f4 d4 a6 e4 a5 c2 f6 d2"))     # O to move
    outcomes = game.move_outcomes(state)[0]
    block = game.parse_action("b4")
    assert outcomes[block] == 0 and (outcomes[game.legal_mask(state)[0]] == -1).sum() > 1
    evaluate = HashEvaluator(game)
    _, result = _search(game, state, evaluate, 3000)
    assert result.proven_value[0] == -1 and result.loses_at_once[0, block] == 0
    assert result.loses_at_once[0].sum() == (outcomes == -1).sum()
    assert result.visits[0].argmax() != block                       # the visits alone would give up the block
    assert choose_moves(result, 0.0, np.random.default_rng(0))[0] == block
    for seed in range(10):
        assert choose_moves(result, 1.0, np.random.default_rng(seed))[0] == block
    player = MCTSPlayer(game, evaluate, SearchConfig(num_simulations=3000))
    assert player.select_actions(state)[0] == block
