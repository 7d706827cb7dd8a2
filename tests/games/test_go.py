"""Go rules on hand-made positions: captures, snapback, ko and superko, suicide, seki, scoring, game end, notation."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import GameError, make_game, make_game_from_params
from shared.games.base import F_DONE, F_LAST, F_PASSES, F_PLAYER, F_PLY, F_WINNER
from shared.games.go.rules import Go, score_text
from tests.games.go_reference import ReferenceGo

SYMBOL = {"X": 1, "O": -1, ".": 0}


def board(diagram: str) -> np.ndarray:
    """Rows of 'X' (black), 'O' (white), '.' from the TOP row down, spaces ignored -> [N*N] int16."""
    rows = [line.replace(" ", "") for line in diagram.strip().splitlines()]
    return np.array([SYMBOL[ch] for row in rows for ch in row], dtype=np.int16)


def setup(game: Go, diagram: str, to_move: int = 1) -> np.ndarray:
    return game.states_from_boards(board(diagram)[None], to_move)


def play(game: Go, state: np.ndarray, moves: str) -> np.ndarray:
    """Play space-separated GTP moves from `state` [1, S], checking each is legal."""
    for action in game.parse_moves(moves):
        game.check_actions(state, np.array([action]))
        state = game.step(state, np.array([action]))
    return state


def legal(game: Go, state: np.ndarray, move: str) -> bool:
    return bool(game.legal_mask(state)[0, game.parse_action(move)])


def cells(game: Go, state: np.ndarray) -> np.ndarray:
    return state[0, : game.num_cells]


def field(game: Go, state: np.ndarray, f: int) -> int:
    return int(state[0, game.num_cells + f])


# ----- captures -------------------------------------------------------------------------------------------
def test_capture_of_one_stone():
    game = Go(5)
    state = setup(game, """
        . . . . .
        . . X . .
        . X O X .
        . . . . .
        . . . . .""")
    original = state.copy()
    after = play(game, state, "C2")
    assert np.array_equal(cells(game, after), board("""
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . ."""))
    assert np.array_equal(state, original), "step returns a new state"


def test_capture_of_a_group_on_the_edge():
    game = Go(5)
    state = setup(game, """
        . . . . .
        . . . . .
        . X X . .
        X O O . .
        X O O X .""")
    elsewhere = play(game, state, "E5")
    assert (cells(game, elsewhere) == -1).sum() == 4
    after = play(game, state, "D2")
    assert np.array_equal(cells(game, after), board("""
        . . . . .
        . . . . .
        . X X . .
        X . . X .
        X . . X ."""))


def test_a_move_capturing_several_groups_is_legal_although_otherwise_suicide():
    game = Go(5)
    state = setup(game, """
        . X O X .
        X O . O X
        . X O X .
        . . . . .
        . . . . .""")
    assert legal(game, state, "C4")
    after = play(game, state, "C4")
    assert np.array_equal(cells(game, after), board("""
        . X . X .
        X . X . X
        . X O X .
        . . . . .
        . . . . ."""))
    white = setup(game, """
        . X O X .
        X O . O X
        . X O X .
        . . . . .
        . . . . .""", to_move=-1)
    assert legal(game, white, "C4"), "white joins its stones; the group keeps the liberty C2"


def test_snapback():
    game = Go(5)
    state = setup(game, """
        . X O . .
        . X O . .
        X X O . .
        O O O . .
        . . . . .""", to_move=-1)
    state = play(game, state, "A4")           # throw-in: black is now in atari at A5
    assert np.array_equal(cells(game, state)[[0, 5]], [0, -1])
    state = play(game, state, "A5")           # black captures the single stone ...
    assert cells(game, state)[5] == 0 and (cells(game, state) == 1).sum() == 5
    assert legal(game, state, "A4"), "retaking captures five stones: a new position, not a ko"
    state = play(game, state, "A4")           # ... and white snaps back, taking five
    assert (cells(game, state) == 1).sum() == 0
    assert np.array_equal(cells(game, state), board("""
        . . O . .
        O . O . .
        . . O . .
        O O O . .
        . . . . ."""))


# ----- ko and superko ---------------------------------------------------------------------------------------
KO = """
    . . . . .
    . X O . .
    X O . O .
    . X O . .
    . . . . ."""


def test_simple_ko_cannot_be_retaken_at_once_but_can_after_a_move_elsewhere():
    game = Go(5)
    state = play(game, setup(game, KO), "C3")
    assert cells(game, state)[2 * 5 + 1] == 0, "B3 is captured"
    assert not legal(game, state, "B3"), "the immediate retake would repeat the position"
    with pytest.raises(GameError, match="not legal"):
        game.check_actions(state, np.array([game.parse_action("B3")]))
    assert legal(game, state, "pass") and legal(game, state, "E5")
    threat = play(game, state, "E5 E1")
    assert legal(game, threat, "B3"), "after an exchange elsewhere the position is new"
    passed = play(game, state, "pass E1")
    assert legal(game, passed, "B3")


def triple_ko_board() -> np.ndarray:
    """9x9 with three separate kos: K1 (top left) and K3 (middle left) taken by white, K2 (top right) by black."""
    return board("""
        . X O . . . X O .
        X O . O . X . X O
        . X O . . . X O .
        . . . . . . . . .
        . X O . . . . . .
        X O . O . . . . .
        . X O . . . . . .
        . . . . . . . . .
        . . . . . . . . .""")


def test_positional_superko_refuses_a_triple_ko_cycle():
    game = Go(9)
    start = game.states_from_boards(triple_ko_board()[None], 1)
    # black takes K1, white K2, black K3, white K1, black K2: every position so far is new ...
    state = play(game, start, "C8 G8 C4 B8 H8")
    ref = ReferenceGo(9, board=list(triple_ko_board()), to_move=1)
    for move in game.parse_moves("C8 G8 C4 B8 H8"):
        ref.play(move)
    assert list(cells(game, state)) == ref.board
    # ... but white taking K3 now would recreate the start position (six moves back): refused
    assert not legal(game, state, "B4")
    assert game.parse_action("B4") not in ref.legal_actions()
    # the simple ko rule alone would allow it: the position two moves back is different
    keys = game.stored_keys(state)[0][0]
    assert len(set(keys[:6].tolist())) == 6
    for k in range(game.num_symmetries):
        moved = game.transform_states(state, k)
        mapped = game.symmetry_action_map(k)[game.parse_action("B4")]
        assert not game.legal_mask(moved)[0, mapped]
        assert np.array_equal(game.legal_mask(moved), game.transform_policy(game.legal_mask(state), k))


# ----- suicide ----------------------------------------------------------------------------------------------
def test_suicide_is_refused_for_one_stone_and_for_a_group():
    game = Go(5)
    corner = setup(game, """
        . O . . .
        O . . . .
        . . . . .
        . . . . .
        . . . . .""")
    assert not legal(game, corner, "A5"), "single-stone suicide in the corner"
    group = setup(game, """
        . . . . .
        . . . . .
        O O O . .
        X X O . .
        . X O . .""")
    assert not legal(game, group, "A1"), "filling the last liberty of its own group, capturing nothing"
    assert legal(game, group, "pass") and legal(game, group, "E1")
    white = setup(game, """
        . . . . .
        . . . . .
        O O O . .
        X X O . .
        . X O . .""", to_move=-1)
    assert legal(game, white, "A1"), "for white, A1 captures the black group"
    after = play(game, white, "A1")
    assert (cells(game, after) == 1).sum() == 0 and (cells(game, after) == -1).sum() == 6


# ----- scoring ----------------------------------------------------------------------------------------------
SEKI = """
    X X X O O
    X X X O O
    X X . O O
    X X . O O
    X X X O O"""


def test_seki_liberties_count_for_neither_side():
    game = Go(5, komi=0)
    state = setup(game, SEKI)
    assert game.area_score(state)[0] == 13 - 10
    assert legal(game, state, "C3") and legal(game, state, "C2"), "self-atari is legal"
    finished = play(game, state, "pass pass")
    assert field(game, finished, F_DONE) == 1 and field(game, finished, F_WINNER) == 1
    # playing into the seki loses the group: black C3, white C2 captures 14 stones
    broken = play(game, state, "C3 C2")
    assert (cells(game, broken) == 1).sum() == 0
    assert game.area_score(broken)[0] == -25


def test_area_score_counts_stones_and_surrounded_regions_with_komi():
    game = make_game("go-5x5")
    walls = play(game, game.initial_states(1), "C1 D1 C2 D2 C3 D3 C4 D4 C5 D5")
    assert game.area_score(walls)[0] == 15 - 10 - 7.5
    over = play(game, walls, "pass pass")
    assert (field(game, over, F_DONE), field(game, over, F_WINNER), field(game, over, F_PASSES)) == (1, -1, 2)
    assert game.terminal_value(over)[0] == -1, "black is to move and lost"
    assert "W+2.5" in game.render(over[0])
    draw_game = Go(5, komi=5)
    drawn = play(draw_game, draw_game.initial_states(1), "C1 D1 C2 D2 C3 D3 C4 D4 C5 D5 pass pass")
    assert draw_game.area_score(drawn)[0] == 0
    assert (field(draw_game, drawn, F_DONE), field(draw_game, drawn, F_WINNER)) == (1, 0)
    assert draw_game.terminal_value(drawn)[0] == 0
    assert game.area_score(game.initial_states(2)).tolist() == [-7.5, -7.5]
    assert game.area_score(walls).dtype == np.float32
    dame = setup(Go(5, komi=0.5), """
        X X . O O
        X X . O O
        X X . O O
        X X . O O
        X X . O O""")
    assert Go(5, komi=0.5).area_score(dame)[0] == -0.5, "the dame column counts for no one"
    assert score_text(3.5) == "B+3.5" and score_text(-0.5) == "W+0.5" and score_text(0.0) == "0"


def test_a_finished_capture_game_is_scored_as_the_reference_does():
    game = Go(7)
    moves = "D4 D5 C5 E4 E5 D6 E3 C6 F4 D3 B6 C4 B5 C3 F5 E6 F6 E7 B7 F7 G6 G7 D7 C7 pass pass"
    state = play(game, game.initial_states(1), moves)
    ref = ReferenceGo(7)
    for action in game.parse_moves(moves):
        ref.play(action)
    assert list(cells(game, state)) == ref.board
    assert field(game, state, F_DONE) == 1 and game.area_score(state)[0] == ref.score()
    assert field(game, state, F_WINNER) == np.sign(ref.score())


# ----- game end and passes ------------------------------------------------------------------------------
def test_two_passes_in_a_row_end_the_game_and_a_move_in_between_resets_them():
    game = make_game("go-9x9")
    state = play(game, game.initial_states(1), "pass")
    assert field(game, state, F_PASSES) == 1 and not game.is_terminal(state)[0]
    state = play(game, state, "E5")           # white
    assert field(game, state, F_PASSES) == 0
    state = play(game, state, "pass")
    assert not game.is_terminal(state)[0]
    state = play(game, state, "pass")
    assert game.is_terminal(state)[0] and not game.legal_mask(state).any()
    assert field(game, state, F_WINNER) == -1 and game.area_score(state)[0] == -81 - 7.5, "white owns the board"
    with pytest.raises(GameError, match="after the game ended"):
        game.play_moves(game.parse_moves("E5 pass pass D4"))


def test_pass_is_always_legal_while_the_game_is_on():
    game = Go(5)
    rng = np.random.default_rng(5)
    states = game.initial_states(16)
    while not game.is_terminal(states).all():
        mask = game.legal_mask(states)
        live = ~game.is_terminal(states)
        assert mask[live, game.pass_action].all() and not mask[~live].any()
        choice = np.where(mask, rng.random(mask.shape) * np.r_[np.ones(25), 0.05], -1).argmax(axis=1)
        states = game.step(states, choice)


def test_the_length_cap_scores_the_game_as_it_stands():
    game = Go(5)
    rng = np.random.default_rng(11)
    states = game.initial_states(8)
    for ply in range(game.max_moves):
        assert not game.is_terminal(states).any(), f"no game may end before the cap here (ply {ply})"
        mask = game.legal_mask(states)
        mask[:, game.pass_action] &= ~mask[:, : game.num_cells].any(axis=1)  # pass only when forced
        mask[:, game.pass_action] &= states[:, game.num_cells + F_PASSES] == 0
        states = game.step(states, np.where(mask, rng.random(mask.shape), -1).argmax(axis=1))
    assert game.is_terminal(states).all() and (states[:, game.num_cells + F_PLY] == 50).all()
    assert np.array_equal(states[:, game.num_cells + F_WINNER], np.sign(game.area_score(states)))


def test_fields_after_moves_and_passes():
    game = Go(5)
    state = play(game, game.initial_states(1), "C3 pass")
    assert (field(game, state, F_PLAYER), field(game, state, F_LAST), field(game, state, F_PLY)) == (1, 25, 2)
    planes = game.encode(state)[0]
    assert planes.shape == (17, 5, 5)
    assert planes[0, 2, 2] == 1 and planes[2, 2, 2] == 1, "black's C3 now and one move back"
    assert planes[4].sum() == 0 and planes[1::2].sum() == 0, "the empty board two moves back; no white stones"
    assert planes[16].all()


# ----- counts -----------------------------------------------------------------------------------------------
def test_move_counts_from_the_empty_5x5_board():
    """Leaves of the move tree (passes are moves; a second pass in a row ends the game), derived by hand:
    1: 25 points + pass; 2: 25*25 + 26; 3: 25*24*23 + 4 * 600 + 2 * 25 (no capture or suicide possible yet);
    4: white to move can first meet suicide, in a corner whose two neighbours are black's only two stones:
       13800*23 - 4*2*22 + 600*24 + (600*24 - 8) + 600*24 + 25*25 = 361041."""
    game = Go(5)
    level = game.initial_states(1)
    counts = []
    for depth in range(4):
        counts.append(int(game.legal_mask(level).sum()))
        if depth < 3:
            parent, action = np.nonzero(game.legal_mask(level))
            level = game.step(level[parent], action)
    assert counts == [26, 651, 15650, 361041]


# ----- names, params and notation ---------------------------------------------------------------------------
def test_names_sizes_and_komi():
    game = make_game("go-9x9")
    assert (game.height, game.num_actions, game.num_planes, game.komi) == (9, 82, 17, 7.5)
    assert game.params() == {"name": "go-9x9", "family": "go", "height": 9, "width": 9, "komi": 7.5}
    assert make_game("GO-19x19").num_actions == 362 and make_game("go-5x5").state_size == 25 + 6 + 175 + 5 * 51
    assert game.state_size == 81 + 6 + 7 * 81 + 5 * 163
    six = make_game_from_params({"name": "go-9x9", "family": "go", "height": 9, "width": 9, "komi": 6.5})
    assert six.komi == 6.5 and six != game and make_game_from_params(six.params()) == six
    assert make_game_from_params({"family": "go", "height": 13, "width": 13}).name == "go-13x13"
    assert Go(9, komi=7) != game and Go(9, komi=7).komi == 7.0
    for bad in ("go-4x4", "go-20x20", "go-9x7"):
        with pytest.raises(GameError, match=r"5\.\.19"):
            make_game(bad)
    for komi in (6.25, "7.5", float("nan"), True):
        with pytest.raises(GameError, match="komi"):
            Go(9, komi=komi)
    with pytest.raises(GameError, match="komi"):
        make_game_from_params({"name": "go-9x9", "komi": 0.3})
    with pytest.raises(GameError, match="go-"):
        make_game("chess")


def test_gtp_vertices():
    game = make_game("go-9x9")
    assert game.parse_action("E5") == 40 == game.parse_action("e5") == game.parse_action(" E5 ")
    assert game.parse_action("A1") == 72 and game.parse_action("J9") == 8 and game.parse_action("H9") == 7
    assert game.parse_action("pass") == game.parse_action("PASS") == game.parse_action("Pass") == 81
    assert game.action_to_str(40) == "E5" and game.action_to_str(8) == "J9" and game.action_to_str(81) == "pass"
    assert game.parse_moves("E5 D4, pass,C3") == [40, 48, 81, 56]
    assert game.parse_moves("") == []
    assert game.moves_to_str([40, 81, 8]) == "E5 pass J9"
    big = make_game("go-19x19")
    assert big.parse_action("K10") == 9 * 19 + 9 and big.parse_action("T19") == 18 and big.action_to_str(342) == "A1"
    for token, fragment in (("I5", "skips the letter I"), ("K5", "columns A-J without I, rows 1-9"),
                            ("E10", "rows 1-9"), ("E0", "rows 1-9"), ("5E", "'5E'"), ("resign", "or 'pass'")):
        with pytest.raises(GameError, match=fragment):
            game.parse_moves(f"E5 {token}")
    with pytest.raises(GameError, match="out of range"):
        game.action_to_str(82)


def test_render_shows_gtp_coordinates_and_the_last_stone():
    game = make_game("go-9x9")
    text = game.render(game.play_moves(game.parse_moves("E5 C3")))
    lines = text.splitlines()
    assert lines[0].split() == list("ABCDEFGHJ") and lines[1].split()[0] == "9" and lines[9].split()[0] == "1"
    assert "[O]" in lines[7] and " X " in lines[5]
    assert "komi 7.5" in text and "X to move" in text


def test_set_up_positions_are_checked():
    game = Go(5)
    with pytest.raises(GameError, match="without liberties"):
        setup(game, "O X . . .\nX . . . .\n. . . . .\n. . . . .\n. . . . .")
    with pytest.raises(GameError, match=r"\+1 \(black\)"):
        game.states_from_boards(np.full((1, 25), 2))
    with pytest.raises(GameError, match="shape"):
        game.states_from_boards(np.zeros((1, 24)))
    with pytest.raises(GameError, match="to_move"):
        game.states_from_boards(np.zeros((1, 25)), to_move=0)
    state = setup(game, KO, to_move=-1)
    assert field(game, state, F_PLAYER) == -1 and field(game, state, F_PLY) == 0


def test_zobrist_keys_are_fixed_because_states_store_them():
    from shared.games.go import board as go_rules
    keys = go_rules.tables(9).flat_keys
    assert hex(int(keys[0])) == "0x5506442244cf1345" and hex(int(keys[-1])) == "0x415dea09cc244372"
    assert np.unique(keys & np.uint64(0xFFFF)).size == keys.size == 162


def test_nothing_is_modified_in_place():
    game = Go(5)
    state = play(game, setup(game, KO), "C3")
    copy = state.copy()
    game.legal_mask(state)
    game.encode(state)
    game.area_score(state)
    game.transform_states(state, 5)
    game.step(state, np.array([game.parse_action("E5")]))
    assert np.array_equal(state, copy)


def test_winning_moves_agree_with_the_generic_rule_on_random_games():
    """Go's cheap winning_moves (only a second pass or the length cap can end a game) equals stepping every move."""
    from shared.games.base import Game

    game = make_game("go-5x5")
    rng = np.random.default_rng(5)
    states = game.initial_states(16)
    seen = 0
    for _ in range(2 * game.num_cells + 2):
        live = ~game.is_terminal(states)
        if not live.any():
            break
        fast, generic = game.winning_moves(states), Game.winning_moves(game, states)
        assert np.array_equal(fast, generic)
        seen += int(fast.any())
        legal = game.legal_mask(states[live])
        # pass often, so that games also end by two passes
        pick = np.where(rng.random(legal.shape[0]) < 0.3, game.pass_action,
                        np.where(legal, rng.random(legal.shape), -1).argmax(axis=1))
        states[live] = game.step(states[live], pick)
    assert seen > 0
