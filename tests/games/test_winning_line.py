"""shared.games.winning_line: the winner's longest line in finished n-in-a-row games, None otherwise."""
from __future__ import annotations

from shared.games import make_game
from shared.games.winning_line import winning_line


def _final(game, moves: str):
    return game.play_moves(game.parse_moves(moves))[0]


def test_the_line_of_each_direction_and_the_longest_run() -> None:
    tictactoe = make_game("tictactoe")
    assert winning_line(tictactoe, _final(tictactoe, "1 4 5 7 9")) == [0, 4, 8]          # the diagonal
    assert winning_line(tictactoe, _final(tictactoe, "3 1 5 2 7")) == [2, 4, 6]          # the anti-diagonal
    connect4 = make_game("connect4")
    state = _final(connect4, "1213141")                                                   # four in column 1
    assert winning_line(connect4, state) == [2 * 7, 3 * 7, 4 * 7, 5 * 7]
    gomoku = make_game("gomoku-6x6-4")
    assert winning_line(gomoku, _final(gomoku, "a1 a6 b1 b6 d1 d6 c1")) == [30, 31, 32, 33]  # row 1 is the last
    assert winning_line(gomoku, _final(gomoku, "a1 a6 b1 b6 d1 d6 e1 e5 c1")) == [30, 31, 32, 33, 34]  # all five


def test_no_line_for_unfinished_drawn_or_other_games() -> None:
    tictactoe = make_game("tictactoe")
    assert winning_line(tictactoe, _final(tictactoe, "1 2")) is None                      # not over
    assert winning_line(tictactoe, _final(tictactoe, "1 2 3 5 4 6 8 7 9")) is None        # a draw
    othello = make_game("othello")
    assert winning_line(othello, othello.initial_states(1)[0]) is None                    # no n in a row
