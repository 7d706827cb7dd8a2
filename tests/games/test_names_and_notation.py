"""Game names, params round trips, move notation and the messages of bad input."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import GAME_NAMES, GameError, make_game, make_game_from_params


def test_presets_and_canonical_names():
    assert GAME_NAMES == ("tictactoe", "connect4", "gomoku-15", "gomoku-8x8-5", "gomoku-6x6-4", "othello", "othello-6x6",
                          "go-9x9")
    assert make_game("gomoku-15x15-5").name == "gomoku-15"
    assert make_game("Othello-8x8") == make_game("othello")
    sizes = {name: (make_game(name).height, make_game(name).width) for name in GAME_NAMES}
    assert sizes == {"tictactoe": (3, 3), "connect4": (6, 7), "gomoku-15": (15, 15), "gomoku-8x8-5": (8, 8),
                     "gomoku-6x6-4": (6, 6), "othello": (8, 8), "othello-6x6": (6, 6), "go-9x9": (9, 9)}
    odd = make_game("gomoku-19x5-6")
    assert (odd.height, odd.width, odd.params()["n_in_row"], odd.num_actions) == (19, 5, 6, 95)


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(GameError) as info:
        make_game("chess")
    message = str(info.value)
    assert "'chess'" in message and all(name in message for name in GAME_NAMES) and "gomoku-{H}x{W}-{n}" in message


@pytest.mark.parametrize("name", ["gomoku-4x4-3", "gomoku-21x21-5", "gomoku-15x15-7", "gomoku-9x9-2"])
def test_gomoku_sizes_out_of_range(name):
    with pytest.raises(GameError, match=r"5\.\.20.*3\.\.6"):
        make_game(name)


def test_params_rebuild_and_reject_mismatches():
    assert make_game_from_params({"family": "gomoku", "height": 7, "width": 9, "n_in_row": 4}).name == "gomoku-7x9-4"
    assert make_game_from_params({"name": "connect4"}) == make_game("connect4")
    assert make_game_from_params({"family": "othello", "height": 6, "width": 6}).name == "othello-6x6"
    for bad, fragment in (({"name": "gomoku-15", "height": 9}, "height=9"),
                          ({"name": "connect4", "colour": 1}, "unknown keys"),
                          ({"family": "chess"}, "family"),
                          ({"family": "gomoku", "height": 9}, "width"),
                          ({"name": "nope"}, "unknown game"),
                          ("connect4", "must be a dict")):
        with pytest.raises(GameError, match=fragment):
            make_game_from_params(bad)


def test_digit_notations():
    ttt, c4 = make_game("tictactoe"), make_game("connect4")
    assert ttt.parse_moves("5 1 9") == ttt.parse_moves("519") == [4, 0, 8]
    assert c4.parse_moves("4453") == c4.parse_moves("4 4 5 3") == [3, 3, 4, 2]
    assert c4.moves_to_str([3, 3, 4, 2]) == "4453" and ttt.moves_to_str([4, 0, 8]) == "519"
    assert ttt.parse_moves("") == []
    for game, token, fragment in ((ttt, "0", "1-9"), (ttt, "x", "1-9"), (c4, "8", "1-7"), (c4, "a", "1-7")):
        with pytest.raises(GameError, match=f"'{token}' is not a .*{fragment}"):
            game.parse_moves(f"1 {token}")


def test_gomoku_squares_count_rows_from_the_bottom():
    game = make_game("gomoku-15")
    assert game.parse_action("h8") == 7 * 15 + 7
    assert game.parse_action("a1") == 14 * 15 and game.parse_action("o15") == 14 and game.parse_action("H8") == 112
    assert game.parse_moves("h8 i9  h9") == [112, 98, 97] and game.moves_to_str([112, 98]) == "h8 i9"
    wide = make_game("gomoku-7x9-4")
    assert wide.parse_action("i7") == 8 and wide.parse_action("a1") == 54
    assert make_game("gomoku-19x19-5").action_to_str(18) == "s19"


@pytest.mark.parametrize("token", ["z9", "p1", "a16", "a0", "h", "88", "h8h"])
def test_gomoku_bad_squares_name_the_token_and_format(token):
    with pytest.raises(GameError) as info:
        make_game("gomoku-15").parse_moves(f"h8 {token}")
    assert f"'{token}' is not a square of a 15x15 board: columns a-o, rows 1-15" in str(info.value)


def test_othello_squares_count_rows_from_the_top():
    game = make_game("othello")
    assert [game.parse_action(t) for t in ("a1", "h8", "pass", "PASS", "f5")] == [0, 63, 64, 64, 37]
    assert game.moves_to_str([37, 43, 18, 64]) == "f5 d6 c3 pass"
    assert game.parse_moves("f5 d6 c3 pass") == [37, 43, 18, 64]
    with pytest.raises(GameError, match=r"'i1' is not a square of a 8x8 board: columns a-h, rows 1-8.*'pass'"):
        game.parse_moves("f5 i1")
    with pytest.raises(GameError, match="'g7' is not a square of a 6x6 board: columns a-f, rows 1-6"):
        make_game("othello-6x6").parse_action("g7")


def test_out_of_range_actions_and_illegal_moves():
    with pytest.raises(GameError, match="out of range"):
        make_game("connect4").action_to_str(7)
    with pytest.raises(GameError, match="out of range"):
        make_game("othello").action_to_str(65)
    game = make_game("othello")
    with pytest.raises(GameError, match=r"move 2: .*a1.* is not legal"):
        game.play_moves(game.parse_moves("f5 a1"))
    with pytest.raises(IndexError, match="symmetry index 8"):
        game.symmetry_action_map(8)


def test_render_shows_coordinates_and_the_last_move():
    game = make_game("gomoku-15")
    text = game.render(game.play_moves(game.parse_moves("h8 a1")))
    lines = text.splitlines()
    assert lines[0].split() == list("abcdefghijklmno") and lines[1].split()[0] == "15"
    bottom = next(line for line in lines if line.split()[0] == "1")
    assert "[O]" in bottom and " X " in lines[8]
    assert "X to move" in text
    othello = make_game("othello")
    board = othello.render(othello.play_moves(othello.parse_moves("f5")))
    assert "[X]" in board.splitlines()[5] and "discs: X (black) 4, O (white) 1" in board
    c4 = make_game("connect4")
    assert "[X]" in c4.render(c4.play_moves([3])[0]).splitlines()[6]
    ttt = make_game("tictactoe")
    assert "game over: X wins" in ttt.render(ttt.play_moves(ttt.parse_moves("14253"))[0])
    assert np.array_equal(game.initial_states(1), make_game("gomoku-15").initial_states(1))
