"""The batched line check of Gomoku against a plain scalar scan, on many random boards and hand-made edge cases."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import F_DONE, F_PLAYER, F_PLY, F_WINNER
from shared.games.gomoku import Gomoku
from shared.games.lines import completes_line, completion_cells, line_move_outcomes

SHAPES = [(5, 5, 3), (5, 5, 4), (6, 6, 4), (7, 9, 4), (9, 7, 5), (8, 8, 5), (15, 15, 5), (19, 19, 6), (5, 19, 5)]
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def scalar_line_through(board: np.ndarray, row: int, col: int, n: int) -> bool:
    """Reference: is there a window of n cells in a straight line, containing (row, col), all of its colour?"""
    height, width = board.shape
    colour = board[row, col]
    for d_row, d_col in DIRECTIONS:
        for offset in range(n):                      # position of (row, col) inside the window
            start_r, start_c = row - offset * d_row, col - offset * d_col
            window = [(start_r + i * d_row, start_c + i * d_col) for i in range(n)]
            if all(0 <= r < height and 0 <= c < width and board[r, c] == colour for r, c in window):
                return True
    return False


def random_boards(height: int, width: int, count: int, seed: int):
    """count random boards [count, H, W] int16 with a stone of `colour` [count] on (rows, cols) [count]."""
    rng = np.random.default_rng(seed)
    density = rng.uniform(0.2, 0.9, size=(count, 1, 1))
    stones = np.where(rng.random((count, height, width)) < density, rng.choice([-1, 1], size=(count, height, width)), 0)
    rows, cols = rng.integers(0, height, count), rng.integers(0, width, count)
    colour = rng.choice([-1, 1], size=count)
    stones[np.arange(count), rows, cols] = colour
    return stones.astype(np.int16), rows, cols, colour.astype(np.int16)


@pytest.mark.parametrize("height,width,n", SHAPES)
def test_batched_check_matches_scalar_scan(height, width, n):
    boards, rows, cols, _ = random_boards(height, width, 600, seed=height * 100 + width * 10 + n)
    batched = completes_line(boards.reshape(len(boards), -1), rows, cols, height, width, n)
    expected = [scalar_line_through(b, r, c, n) for b, r, c in zip(boards, rows, cols)]
    assert batched.tolist() == expected
    assert 0 < batched.sum() < len(batched), "the sample must contain both wins and non-wins"


@pytest.mark.parametrize("height,width,n", SHAPES)
def test_step_reports_the_same_wins(height, width, n):
    game = Gomoku(height, width, n)
    boards, rows, cols, colour = random_boards(height, width, 300, seed=n * 1000 + height + width)
    flat = boards.reshape(len(boards), -1)
    actions = rows * width + cols
    expected = np.array([scalar_line_through(b, r, c, n) for b, r, c in zip(boards, rows, cols)])
    before = np.zeros((len(boards), game.state_size), dtype=np.int16)
    before[:, : game.num_cells] = flat
    before[np.arange(len(boards)), actions] = 0                # the move is played into an empty cell
    before[:, game.num_cells + F_PLAYER] = colour
    before[:, game.num_cells + F_PLY] = (before[:, : game.num_cells] != 0).sum(axis=1)
    after = game.step(before, actions)
    assert np.array_equal(after[:, : game.num_cells], flat)
    full = (flat != 0).all(axis=1)
    assert np.array_equal(after[:, game.num_cells + F_DONE] == 1, expected | full)
    assert np.array_equal(after[:, game.num_cells + F_WINNER], np.where(expected, colour, 0))


def play_line(game, cells, last_index, filler_far_away=True):
    """Black plays `cells` (list of (row, col)), last one last; white answers on cells far from them. -> final state."""
    taken = set(cells)
    white = [(r, c) for r in range(game.height) for c in range(game.width)
             if all(max(abs(r - a), abs(c - b)) >= 2 for a, b in cells) and (r, c) not in taken]
    order = [cells[i] for i in range(len(cells)) if i != last_index] + [cells[last_index]]
    moves = []
    for i, (r, c) in enumerate(order):
        moves.append(r * game.width + c)
        if i < len(order) - 1:
            wr, wc = white[i * 2 % len(white)] if filler_far_away else white[i]
            moves.append(wr * game.width + wc)
    return game.play_moves(moves)[0]


def line(start, step, length):
    return [(start[0] + i * step[0], start[1] + i * step[1]) for i in range(length)]


@pytest.mark.parametrize("name", ["gomoku-15", "gomoku-7x9-4", "gomoku-9x7-5"])
def test_lines_along_edges_and_diagonals_win(name):
    game = make_game(name)
    h, w, n = game.height, game.width, game.params()["n_in_row"]
    cases = [line((0, 0), (0, 1), n), line((h - 1, w - n), (0, 1), n),      # top and bottom edges
             line((0, 0), (1, 0), n), line((h - n, w - 1), (1, 0), n),      # left and right edges
             line((0, 0), (1, 1), n), line((h - n, w - n), (1, 1), n),      # diagonal, touching corners
             line((0, w - 1), (1, -1), n), line((h - n, n - 1), (1, -1), n)]  # anti-diagonal
    for cells in cases:
        for last_index in (0, n // 2, n - 1):
            state = play_line(game, cells, last_index)
            assert state[game.num_cells + F_DONE] == 1 and state[game.num_cells + F_WINNER] == 1, (cells, last_index)


@pytest.mark.parametrize("name", ["gomoku-15", "gomoku-8x8-5", "gomoku-6x6-4"])
def test_overlines_win_in_freestyle(name):
    game = make_game(name)
    n = game.params()["n_in_row"]
    cells = line((2, 0), (0, 1), n + 1)                # n + 1 stones, the gap filled last in the middle
    state = play_line(game, cells, last_index=n // 2)
    assert state[game.num_cells + F_WINNER] == 1
    short = play_line(game, line((2, 0), (0, 1), n - 1), last_index=0)
    assert short[game.num_cells + F_DONE] == 0, "n - 1 in a row must not win"


@pytest.mark.parametrize("name", ["gomoku-5x5-3", "gomoku-6x6-4", "gomoku-8x8-5", "gomoku-7x9-4", "gomoku-5x19-5"])
def test_full_board_without_a_line_is_a_draw(name):
    game = make_game(name)
    rows, cols = np.indices((game.height, game.width))
    pattern = np.where((cols // 2 + rows) % 2 == 0, 1, -1).reshape(-1)  # longest run: 2
    black, white = list(np.flatnonzero(pattern == 1)), list(np.flatnonzero(pattern == -1))
    assert len(black) - len(white) in (0, 1)
    moves = [cell for pair in zip(black, white) for cell in pair] + black[len(white):]
    state = game.play_moves(moves)[0]
    assert state[game.num_cells + F_DONE] == 1 and state[game.num_cells + F_WINNER] == 0
    assert game.terminal_value(state[None])[0] == 0


def test_connect4_outcomes_match_stepping_every_move_and_reply():
    """The gravity branch of line_move_outcomes (landing cells and the cells above) against the definition."""
    from shared.games.base import Game
    from tests.games.helpers import random_playout

    game = make_game("connect4")
    states = random_playout(game, 400, seed=7).all_positions()
    fast = game.move_outcomes(states)
    rows, actions = np.nonzero(game.legal_mask(states))
    children = game.step(states[rows], actions)
    wins_now = Game.winning_moves(game, states)[rows, actions]
    opponent_wins = Game.winning_moves(game, children).any(axis=1) & ~game.is_terminal(children)
    exact = np.zeros_like(fast)
    exact[rows, actions] = np.where(wins_now, 1, np.where(opponent_wins, -1, 0))
    np.testing.assert_array_equal(fast, exact)
    assert (exact == 1).sum() > 100 and (exact == -1).sum() > 100


@pytest.mark.parametrize("height,width,n", SHAPES + [(8, 7, 4), (1, 12, 4), (20, 20, 5)])
def test_completion_cells_match_placing_a_stone_on_every_empty_cell(height, width, n):
    """Both layouts of the bit-mask kernel (one bitboard for boards of at most 64 cells, row masks above) against
    the scalar scan: a cell wins for a player when it is empty and a stone of that player there is in a line of n."""
    boards, _, _, _ = random_boards(height, width, 60, seed=height * 100 + width + n)
    boards[: 20] = np.where(np.random.default_rng(1).random(boards[:20].shape) < 0.7, 0, boards[:20])  # sparser
    first, second = completion_cells(boards.reshape(60, -1), height, width, n)
    for b, board in enumerate(boards):
        for colour, found in ((1, first[b]), (-1, second[b])):
            expected = np.zeros(height * width, bool)
            for cell in np.flatnonzero(board.reshape(-1) == 0):
                trial = board.copy()
                trial[cell // width, cell % width] = colour
                expected[cell] = scalar_line_through(trial, cell // width, cell % width, n)
            np.testing.assert_array_equal(found, expected, err_msg=f"board {b}, colour {colour}")
    assert first.any() and second.any()


def test_line_masks_refuse_boards_they_cannot_hold():
    states = np.zeros((1, 60 * 5 + 6), np.int16)
    with pytest.raises(ValueError, match="out of range"):
        line_move_outcomes(states, 5, 60, 5, gravity=False)
    with pytest.raises(ValueError, match="gravity boards of at most 64 cells"):
        line_move_outcomes(np.zeros((1, 9 * 9 + 6), np.int16), 9, 9, 4, gravity=True)
