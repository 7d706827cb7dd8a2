"""The VCF solver (shared/search/vcf.py) on hand-built positions, against a brute-force reference, and replayed
against every defender reply with the real Gomoku rules.

Boards are written as text, row 0 at the top: X = first player (+1), O = second player (-1), . = empty.
X is to move unless a test says otherwise.
"""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import F_DONE, F_PLAYER, F_PLY, F_WINNER, Game
from shared.search.errors import SearchError
from shared.games.gomoku.vcf import (
    DefenceStatus, VcfStatus, find_vcf, find_vcf_defence, vcf_first_moves,
)

GOMOKU_15, GOMOKU_8, GOMOKU_6 = make_game("gomoku-15"), make_game("gomoku-8x8-5"), make_game("gomoku-6x6-4")
BIG_BUDGET = 200_000


# ----- helpers -------------------------------------------------------------------------------------------------

def position(game: Game, text: str, to_move: int = 1) -> np.ndarray:
    """A state [S] int16 from a text board (one line per row, top row first)."""
    rows = [line.strip() for line in text.strip().splitlines()]
    assert len(rows) == game.height and all(len(r) == game.width for r in rows), "board text has the wrong size"
    state = game.initial_states(1)[0]
    values = {"X": 1, "O": -1, ".": 0}
    state[: game.num_cells] = [values[ch] for row in rows for ch in row]
    state[game.num_cells + F_PLAYER] = to_move
    state[game.num_cells + F_PLY] = int(np.count_nonzero(state[: game.num_cells]))
    return state


def cell(game: Game, row: int, col: int) -> int:
    return row * game.width + col


def with_stone(game: Game, state: np.ndarray, action: int, colour: int, to_move: int) -> np.ndarray:
    out = state.copy()
    out[action] = colour
    out[game.num_cells + F_PLAYER] = to_move
    return out


def winning_cells(game: Game, states: np.ndarray, colour: int) -> np.ndarray:
    """Cells where `colour` would make n in a row (real rules, as if `colour` moved): [R, S] -> [R, A] bool."""
    trial = states.copy()
    trial[:, game.num_cells + F_PLAYER] = colour
    rows, cells = np.nonzero(trial[:, : game.num_cells] == 0)
    after = game.step(trial[rows], cells)
    won = (after[:, game.num_cells + F_DONE] == 1) & (after[:, game.num_cells + F_WINNER] == colour)
    out = np.zeros((states.shape[0], game.num_actions), dtype=bool)
    out[rows[won], cells[won]] = True
    return out


def reference_vcf(game: Game, state: np.ndarray, depth: int) -> bool:
    """Brute force by the real rules: can the side to move win by continuous fours within `depth` moves?

    Every empty cell is tried; a move counts as a four when afterwards the defender cannot make five and the
    attacker has a five cell; two or more five cells win, one forces the block and the search goes on.
    """
    me = int(state[game.num_cells + F_PLAYER])
    if winning_cells(game, state[None], me)[0].any():
        return True
    empties = np.flatnonzero(state[: game.num_cells] == 0)
    kids = game.step(np.repeat(state[None], empties.size, axis=0), empties)
    live = kids[:, game.num_cells + F_DONE] == 0
    threats = winning_cells(game, kids, me)
    counts = threats.sum(axis=1)
    fours = live & ~winning_cells(game, kids, -me).any(axis=1) & (counts >= 1)
    if (fours & (counts >= 2)).any():
        return True
    if depth < 2:
        return False
    for k in np.flatnonzero(fours):
        after = game.step(kids[k: k + 1], np.flatnonzero(threats[k])[:1])[0]
        if after[game.num_cells + F_DONE] == 0 and reference_vcf(game, after, depth - 1):
            return True
    return False


def attacker_wins(game: Game, state: np.ndarray, moves: tuple[int, ...]) -> bool:
    """Replay a VCF by the real rules: the attacker plays `moves` in order but makes five whenever it can.

    True when this wins against EVERY legal defender reply at every step.
    """
    me = int(state[game.num_cells + F_PLAYER])

    def attack(current: np.ndarray, index: int) -> bool:
        if winning_cells(game, current[None], me)[0].any():
            return True
        if index >= len(moves) or current[moves[index]] != 0:
            return False
        after = game.step(current[None], np.array([moves[index]]))[0]
        if after[game.num_cells + F_DONE]:
            return bool(after[game.num_cells + F_WINNER] == me)
        replies = np.flatnonzero(after[: game.num_cells] == 0)
        kids = game.step(np.repeat(after[None], replies.size, axis=0), replies)
        if (kids[:, game.num_cells + F_DONE] != 0).any():            # the defender made five, or a full-board draw
            return False
        can_win = winning_cells(game, kids, me).any(axis=1)
        return all(attack(kid, index + 1) for kid in kids[~can_win])

    return attack(state, 0)


def random_positions(game: Game, count: int, plies: tuple[int, int], seed: int) -> list[np.ndarray]:
    """Positions from uniformly random play (games stopped before they end), [S] int16 each."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        state = game.initial_states(1)
        for _ in range(int(rng.integers(*plies))):
            nxt = game.step(state, np.array([rng.choice(np.flatnonzero(game.legal_mask(state)[0]))]))
            if game.is_terminal(nxt)[0]:
                break
            state = nxt
        out.append(state[0])
    return out


# ----- constructed positions -----------------------------------------------------------------------------------
# Chains: each attacker four a_i is forced (one five cell, blocked at once) and adds a stone to the line of the
# next four; the last four also completes a second line, a double four. Lines are capped by O stones or the
# edge so that no four is open. Either end of a chain can be started from, so the solver may play it backwards.

# a1 = (6,6): column 6 four (block (4,6)); a2 = (6,10): row 6 four + column 10 four = double four.
CHAIN_15_DEPTH_2 = """
...............
......O........
......X........
......X........
...............
......X........
.....O.X.X.O...
..........X....
...............
..........X....
..........X....
..........O....
...............
...............
...............
"""

# a1 = (4,4) column 4 four; a2 = (4,8) row 4 four; a3 = (8,8) column 8 four + row 8 four.
CHAIN_15_DEPTH_3 = """
....X..........
....X..........
...............
....X...O......
...O.X.X.O.....
........X......
...............
........X......
.........X.XXO.
........O......
...............
...............
...............
...............
...............
"""

# a1 = (5,3), a2 = (5,7), a3 = (9,7), a4 = (9,11): column, row, column, row + column.
CHAIN_15_DEPTH_4 = """
...O...........
...X...........
...X...........
...............
...X...O.......
..O.X.X.O......
.......X.......
...............
.......X.......
......O.X.X.O..
.......O...X...
...............
...........X...
...........X...
...........O...
"""

# a1 = (0,3) row 0 four; a2 = (4,3) column 3 four + row 4 four.
CHAIN_8_DEPTH_2 = """
....X.XX
...X....
........
...X....
....X.XX
...O....
........
........
"""

# (3,3) column 3 four (block (5,3)); (3,4) row 3 four (block (3,5)); (2,5) makes an open four on the
# anti-diagonal (1,6)-(4,3).
CHAIN_8_DEPTH_3 = """
..O...O.
...XOOX.
..O....O
..X...X.
...X...X
......O.
..OX...X
X..X...X
"""

# n = 4. a1 = (0,2) row 0 four; a2 = (3,2) column 2 four + row 3 four.
CHAIN_6_DEPTH_2 = """
...X.X
..X...
......
...X.X
..O...
......
"""

# n = 4. (2,3) anti-diagonal four (block (1,4)); (3,3) column 3 four (block (4,3)); (3,0) row 3 four +
# column 0 four.
CHAIN_6_DEPTH_3 = """
X....X
X..O..
.O....
..X...
..O.X.
OX.XO.
"""

CHAINS = [
    pytest.param(GOMOKU_15, CHAIN_15_DEPTH_2, 2, id="15x15-depth2"),
    pytest.param(GOMOKU_15, CHAIN_15_DEPTH_3, 3, id="15x15-depth3"),
    pytest.param(GOMOKU_15, CHAIN_15_DEPTH_4, 4, id="15x15-depth4"),
    pytest.param(GOMOKU_8, CHAIN_8_DEPTH_2, 2, id="8x8-depth2"),
    pytest.param(GOMOKU_8, CHAIN_8_DEPTH_3, 3, id="8x8-depth3"),
    pytest.param(GOMOKU_6, CHAIN_6_DEPTH_2, 2, id="6x6-depth2"),
    pytest.param(GOMOKU_6, CHAIN_6_DEPTH_3, 3, id="6x6-depth3"),
]

# Only capped threes (each four has one five cell and leads nowhere) and an open two. (On 6x6 with n = 4, two
# capped threes in the corners already make a VCF of depth 5, so that board has one "three" and a lone stone.)
ONLY_THREES_15 = """
...............
...............
...............
..OXXX.........
...............
...............
...........O...
...........X...
...........X...
...........X...
...............
...............
..XX...........
...............
..............O
"""
ONLY_THREES_8 = """
OXXX....
........
........
........
........
.....X..
.....X..
...O.X..
"""
ONLY_THREES_6 = """
OXX...
......
......
......
.....X
.....O
"""


# ----- win in one, must block ----------------------------------------------------------------------------------

@pytest.mark.parametrize("game", [GOMOKU_15, GOMOKU_8, GOMOKU_6], ids=lambda g: g.name)
def test_win_in_one(game):
    n = game.n_in_row
    capped = position(game, "\n".join(
        ["O" + "X" * (n - 1) + "." * (game.width - n)] + ["." * game.width] * (game.height - 1)))
    result = find_vcf(game, capped)
    assert result.status is VcfStatus.FOUND and result.depth == 1
    assert result.moves == (cell(game, 0, n),) and result.replies == () and result.finish == ()
    blank = ["." * game.width] * game.height
    open_four = position(game, "\n".join(blank[:2] + ["." + "X" * (n - 1) + "." * (game.width - n)] + blank[3:]))
    result = find_vcf(game, open_four)
    assert result.depth == 1 and result.first_move in (cell(game, 2, 0), cell(game, 2, n))
    assert attacker_wins(game, open_four, result.moves)


@pytest.mark.parametrize("game", [GOMOKU_15, GOMOKU_8, GOMOKU_6], ids=lambda g: g.name)
def test_must_block_the_opponents_four(game):
    n = game.n_in_row
    blank = ["." * game.width] * game.height
    rows = list(blank)
    rows[1] = "X" + "O" * (n - 1) + "." * (game.width - n)          # O four, five cell (1, n)
    rows[game.height - 1] = "X" + "." * (game.width - 1)
    state = position(game, "\n".join(rows))
    block = cell(game, 1, n)
    assert find_vcf(game, state).status is VcfStatus.NONE           # X's only move is a block that is no four
    defence = find_vcf_defence(game, state)
    assert defence.must_block == (block,) and defence.winning_moves == ()
    assert defence.status is DefenceStatus.DEFENDED and defence.defences == (block,)
    rows[3] = "." + "O" * (n - 1) + "." * (game.width - n)          # and an open four: two five cells
    lost = find_vcf_defence(game, position(game, "\n".join(rows)))
    assert lost.status is DefenceStatus.LOST and len(lost.must_block) == 3


def test_win_now_comes_before_blocking():
    game = GOMOKU_15
    state = position(game, "\n".join(["OOOO..........."] + ["." * 15] * 13 + ["XXXX..........."]))
    defence = find_vcf_defence(game, state)
    assert defence.status is DefenceStatus.WIN_NOW and defence.winning_moves == (cell(game, 14, 4),)
    result = find_vcf(game, state)
    assert result.moves == (cell(game, 14, 4),)


# O threatens five at (3,4). X's block there makes a four on column 4; capped above by O at (2,4) it has one
# five cell (7,4), O blocks it and X has nothing left.
FORCED_BLOCK_15 = """
...............
...............
....O..........
OOOO...........
....X..........
....X..........
....X..........
...............
...............
...............
...............
...............
...............
...............
...............
"""


def test_the_forced_block_must_itself_be_a_four():
    game = GOMOKU_15
    state = position(game, FORCED_BLOCK_15)
    assert find_vcf(game, state, max_depth=4, max_nodes=BIG_BUDGET).status is VcfStatus.NONE
    assert find_vcf_defence(game, state).must_block == (cell(game, 3, 4),)
    state[cell(game, 2, 4)] = 0                                      # uncapped: the block makes an open four
    result = find_vcf(game, state, max_depth=4, max_nodes=BIG_BUDGET)
    assert result.status is VcfStatus.FOUND and result.moves == (cell(game, 3, 4),)
    assert result.finish == (cell(game, 2, 4), cell(game, 7, 4))
    assert attacker_wins(game, state, result.moves)


# ----- chains of fours -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("game,text,depth", CHAINS)
def test_chain_of_fours_is_found_at_its_exact_depth(game, text, depth):
    state = position(game, text)
    result = find_vcf(game, state, max_depth=depth, max_nodes=BIG_BUDGET)
    assert result.status is VcfStatus.FOUND and result.depth == depth
    assert len(result.replies) == depth - 1 and len(result.finish) >= 2       # ends in a double four
    assert attacker_wins(game, state, result.moves)
    shorter = find_vcf(game, state, max_depth=depth - 1, max_nodes=BIG_BUDGET)
    assert shorter.status is VcfStatus.NONE and shorter.moves == ()
    deeper = find_vcf(game, state, max_depth=depth + 2, max_nodes=BIG_BUDGET)
    assert deeper.depth == depth                                                # the shortest one comes first


@pytest.mark.parametrize("game,text,depth", CHAINS[:1] + CHAINS[3:])
def test_a_first_found_vcf_without_deepening_is_sound(game, text, depth):
    state = position(game, text)
    result = find_vcf(game, state, max_depth=depth + 2, max_nodes=BIG_BUDGET, shortest=False)
    assert result.status is VcfStatus.FOUND and depth <= result.depth <= depth + 2
    assert attacker_wins(game, state, result.moves)


@pytest.mark.parametrize("game,text,depth", [p for p in CHAINS if p.values[0] is not GOMOKU_15])
def test_chain_depths_agree_with_brute_force(game, text, depth):
    state = position(game, text)
    assert reference_vcf(game, state, depth) and not reference_vcf(game, state, depth - 1)


@pytest.mark.parametrize("game,text", [(GOMOKU_15, ONLY_THREES_15), (GOMOKU_8, ONLY_THREES_8),
                                       (GOMOKU_6, ONLY_THREES_6)], ids=["15x15", "8x8", "6x6"])
def test_only_capped_threes_have_no_vcf(game, text):
    state = position(game, text)
    result = find_vcf(game, state, max_depth=6, max_nodes=BIG_BUDGET)
    assert result.status is VcfStatus.NONE and result.first_move == -1 and result.nodes > 1
    if game is not GOMOKU_15:
        assert not reference_vcf(game, state, 3)


def test_open_three_wins_in_one_open_four():
    state = position(GOMOKU_15, "\n".join(["." * 15] * 7 + ["....XXX........"] + ["." * 15] * 7))
    result = find_vcf(GOMOKU_15, state)
    assert result.depth == 1 and result.first_move in (cell(GOMOKU_15, 7, 3), cell(GOMOKU_15, 7, 7))
    assert len(result.finish) == 2 and attacker_wins(GOMOKU_15, state, result.moves)


# The depth-2 chain of CHAIN_15_DEPTH_2, plus O stones so that each first four's forced block makes an O four
# (row 4: block (4,6) -> O at 6,7,8,10 with five cell (4,9); row 8: block (8,10) -> five cell (8,13)).
COUNTER_FOUR_15 = """
...............
......O........
......X........
......X........
.......OO.O....
......X........
.....O.X.X.O...
..........X....
...........OO.O
..........X....
..........X....
..........O....
...............
...............
...............
"""
# As above, but X's forced answer (4,9) to the O four is itself a four (column 9, capped at (8,9)).
COUNTER_FOUR_ANSWERED_15 = """
...............
......O........
......X........
......X........
.......OO.O....
......X..X.....
.....O.X.X.O...
.........XX....
.........O.OO.O
..........X....
..........X....
..........O....
...............
...............
...............
"""


def test_a_block_that_makes_a_defender_four_refutes_the_apparent_vcf():
    game = GOMOKU_15
    plain = position(game, CHAIN_15_DEPTH_2)
    assert find_vcf(game, plain, max_depth=2).depth == 2
    state = position(game, COUNTER_FOUR_15)
    for depth in (2, 4, 6):
        assert find_vcf(game, state, max_depth=depth, max_nodes=BIG_BUDGET).status is VcfStatus.NONE
    assert not reference_vcf(game, state, 2)


def test_a_defender_four_answered_by_a_four_keeps_the_vcf():
    game = GOMOKU_15
    state = position(game, COUNTER_FOUR_ANSWERED_15)
    assert find_vcf(game, state, max_depth=2, max_nodes=BIG_BUDGET).status is VcfStatus.NONE
    result = find_vcf(game, state, max_depth=4, max_nodes=BIG_BUDGET)
    assert result.status is VcfStatus.FOUND and result.depth == 3
    assert cell(game, 4, 9) in result.moves                     # the block of O's four / a four of its own
    assert attacker_wins(game, state, result.moves)


# CHAIN_15_DEPTH_2 again: the first four's block (4,6) now makes an OPEN O four on the anti-diagonal
# (2,8)-(5,5) (five cells (1,9) and (6,4)); X's block of (1,9) would be a four (row 1) and then a2 a double four,
# but O simply makes five on (6,4). The other order is refuted as in COUNTER_FOUR_15 (row 8).
OPEN_COUNTER_FOUR_15 = """
...............
......O...XXXO.
......X.O......
......XO.......
...............
.....OX........
.....O.X.X.O...
..........X....
...........OO.O
..........X....
..........X....
..........O....
...............
...............
...............
"""


def test_a_block_that_makes_two_defender_fives_ends_the_line():
    game = GOMOKU_15
    state = position(game, OPEN_COUNTER_FOUR_15)
    assert find_vcf(game, state, max_depth=4, max_nodes=BIG_BUDGET).status is VcfStatus.NONE
    longer = find_vcf(game, state, max_depth=5, max_nodes=BIG_BUDGET)  # a real, longer VCF elsewhere
    assert longer.depth == 5 and attacker_wins(game, state, longer.moves)


def test_a_defender_five_threat_must_be_answered_first():
    game = GOMOKU_15
    state = position(game, CHAIN_15_DEPTH_2)
    state[cell(game, 13, 0): cell(game, 13, 4)] = -1                # O four on row 13, five cell (13,4)
    assert find_vcf(game, state, max_depth=4, max_nodes=BIG_BUDGET).status is VcfStatus.NONE


# ----- the defence finder --------------------------------------------------------------------------------------

# O (not to move) makes three fours at once on (7,7) / (4,4): row, column and anti-diagonal. Any other cell
# leaves two of the lines, so exactly one cell stops the VCF.
TRIPLE_POINT_15 = """
...............
...............
...............
...........X...
..........O....
.........O.....
........O......
...XOOO........
.......O.......
.......O.......
.......O.......
.......X.......
...............
...............
...............
"""
TRIPLE_POINT_8 = """
........
.......O
......O.
.....O..
XOOO....
....O...
....O...
....O...
"""


@pytest.mark.parametrize("game,text,key", [(GOMOKU_15, TRIPLE_POINT_15, (7, 7)), (GOMOKU_8, TRIPLE_POINT_8, (4, 4))],
                         ids=["15x15", "8x8"])
def test_exactly_one_cell_stops_the_opponents_vcf(game, text, key):
    state = position(game, text)
    key_cell = cell(game, *key)
    defence = find_vcf_defence(game, state, max_nodes=BIG_BUDGET)
    assert defence.status is DefenceStatus.DEFENDED and defence.defences == (key_cell,)
    assert defence.threat.found and defence.threat.moves == (key_cell,)
    assert defence.must_block == () and defence.winning_moves == () and defence.undecided == ()
    # By the real rules: after any other X move, O's move on the key cell still makes two or more five cells
    # (and X has no five of its own); after X takes the key cell, O has no VCF.
    me = int(state[game.num_cells + F_PLAYER])
    others = [int(c) for c in np.flatnonzero(state[: game.num_cells] == 0) if c != key_cell]
    after = np.stack([with_stone(game, state, c, me, to_move=-me) for c in others])
    assert not winning_cells(game, after, me).any()
    after[:, key_cell] = -me
    assert (winning_cells(game, after, -me).sum(axis=1) >= 2).all()
    blocked = with_stone(game, state, key_cell, me, to_move=-me)
    assert not reference_vcf(game, blocked, 3 if game is GOMOKU_8 else 1)


@pytest.mark.parametrize("game,text,depth", [CHAINS[0], CHAINS[3], CHAINS[5], CHAINS[6]])
def test_defences_against_a_chain_really_stop_it(game, text, depth):
    state = position(game, text, to_move=-1)                          # O to move; X threatens the chain
    defence = find_vcf_defence(game, state, max_depth=depth + 1, max_nodes=BIG_BUDGET)
    assert defence.threat.depth == depth and defence.undecided == ()
    assert (defence.status is DefenceStatus.DEFENDED) == bool(defence.defences)
    assert defence.status in (DefenceStatus.DEFENDED, DefenceStatus.NO_DEFENCE)
    for move in defence.candidates:
        after = with_stone(game, state, move, -1, to_move=1)
        stops = not find_vcf(game, after, max_depth=depth + 1, max_nodes=BIG_BUDGET).found
        assert stops == (move in defence.defences), move
        if stops and game is not GOMOKU_15:
            assert not reference_vcf(game, after, depth + 1), move
    if game is GOMOKU_6:                                             # brute force: is there any defence at all?
        empties = np.flatnonzero(state[: game.num_cells] == 0)
        true = [int(c) for c in empties if not reference_vcf(game, with_stone(game, state, int(c), -1, 1), depth + 1)]
        assert set(defence.defences) <= set(true)
        assert bool(true) == bool(defence.defences), true


def test_every_cell_of_a_two_line_chain_defends():
    """CHAIN_15_DEPTH_2 with O to move: taking either four move, the gap of the middle line or either end
    line's five cell breaks the chain (worked out by hand in the comments of CHAIN_15_DEPTH_2); nothing else does."""
    game = GOMOKU_15
    state = position(game, CHAIN_15_DEPTH_2, to_move=-1)
    defence = find_vcf_defence(game, state, max_depth=4, max_nodes=BIG_BUDGET)
    expected = {cell(game, *rc) for rc in ((6, 6), (4, 6), (6, 8), (6, 10), (8, 10))}
    assert defence.status is DefenceStatus.DEFENDED and set(defence.defences) == expected


def test_no_threat():
    game = GOMOKU_15
    state = position(game, ONLY_THREES_15, to_move=-1)
    defence = find_vcf_defence(game, state)
    assert defence.status is DefenceStatus.NO_THREAT and defence.defences == ()
    assert defence.threat.status is VcfStatus.NONE


def test_no_defence_when_the_forced_block_leaves_the_vcf():
    game = GOMOKU_15
    state = position(game, TRIPLE_POINT_15)
    state[cell(game, 0, 0): cell(game, 0, 4)] = -1                  # O four on row 0: X must block (0,4)
    defence = find_vcf_defence(game, state)
    assert defence.must_block == (cell(game, 0, 4),) and defence.candidates == (cell(game, 0, 4),)
    assert defence.status is DefenceStatus.NO_DEFENCE and defence.defences == ()


# ----- randomized soundness ------------------------------------------------------------------------------------

@pytest.mark.parametrize("game,plies,count,depth,seed", [
    (GOMOKU_15, (30, 61), 160, 4, 1),
    (GOMOKU_8, (12, 36), 200, 4, 2),
    (GOMOKU_6, (6, 20), 200, 4, 3),
], ids=["15x15", "8x8", "6x6"])
def test_every_reported_vcf_wins_against_every_defence(game, plies, count, depth, seed):
    checked = deep = 0
    for state in random_positions(game, count, plies, seed):
        if winning_cells(game, state[None], int(state[game.num_cells + F_PLAYER]))[0].any():
            continue                                                 # skip trivial wins: the replay is costly
        result = find_vcf(game, state, max_depth=depth)
        if result.found:
            assert attacker_wins(game, state, result.moves), game.render(state)
            checked += 1
            deep += result.depth >= 2
    assert checked >= 20 and deep >= 5, (checked, deep)


@pytest.mark.parametrize("game,plies,count,depth,seed", [
    (GOMOKU_6, (6, 22), 120, 3, 4),
    (GOMOKU_8, (10, 30), 40, 2, 5),
], ids=["6x6", "8x8"])
def test_found_or_none_agrees_with_brute_force(game, plies, count, depth, seed):
    outcomes = set()
    for state in random_positions(game, count, plies, seed):
        for limit in range(1, depth + 1):
            result = find_vcf(game, state, max_depth=limit, max_nodes=BIG_BUDGET)
            assert result.status is not VcfStatus.UNKNOWN
            expected = reference_vcf(game, state, limit)
            assert result.found == expected, (limit, game.render(state))
            outcomes.add((limit, expected))
    assert {(depth, True), (depth, False)} <= outcomes


def test_random_defences_are_sound_on_6x6():
    game = GOMOKU_6
    checked = 0
    for state in random_positions(game, 150, (6, 20), seed=6):
        defence = find_vcf_defence(game, state, max_depth=3, max_nodes=BIG_BUDGET)
        if defence.status is not DefenceStatus.DEFENDED or defence.must_block:
            continue
        me = int(state[game.num_cells + F_PLAYER])
        for move in defence.defences:
            after = with_stone(game, state, move, me, to_move=-me)
            fives = np.flatnonzero(winning_cells(game, after[None], me)[0])
            if fives.size == 1:                                      # a four: the opponent blocks, then it moves
                after = with_stone(game, after, int(fives[0]), -me, to_move=-me)
            assert fives.size >= 2 or not reference_vcf(game, after, 3), (move, game.render(state))
            checked += 1
    assert checked >= 10


# ----- budget, batch, errors -----------------------------------------------------------------------------------

def test_a_tiny_node_budget_gives_unknown_not_none():
    game = GOMOKU_15
    chain = position(game, CHAIN_15_DEPTH_4)
    assert find_vcf(game, chain, max_depth=4, max_nodes=10).status is VcfStatus.UNKNOWN
    none = position(game, ONLY_THREES_15)
    result = find_vcf(game, none, max_depth=4, max_nodes=1)
    assert result.status is VcfStatus.UNKNOWN and result.first_move == -1
    assert find_vcf(game, none, max_depth=4, max_nodes=BIG_BUDGET).status is VcfStatus.NONE
    defence = find_vcf_defence(game, position(game, TRIPLE_POINT_15), max_nodes=1)
    assert defence.status is not DefenceStatus.NO_DEFENCE


def test_budget_is_respected():
    game = GOMOKU_15
    for limit in (5, 50, 500):
        result = find_vcf(game, position(game, CHAIN_15_DEPTH_4), max_depth=4, max_nodes=limit)
        assert result.nodes <= limit


def test_batched_first_moves():
    game = GOMOKU_15
    chain = position(game, CHAIN_15_DEPTH_3)
    none = position(game, ONLY_THREES_15)
    over = game.play_moves([cell(game, r, c) for c in range(5) for r in (0, 5)][:9])[0]
    assert over[game.num_cells + F_DONE] == 1
    states = np.stack([chain, none, over, chain])
    moves = vcf_first_moves(game, states, max_depth=4, max_nodes=BIG_BUDGET)
    assert moves.dtype == np.int64 and moves.shape == (4,)
    first = find_vcf(game, chain, max_depth=4, max_nodes=BIG_BUDGET).first_move
    assert moves.tolist() == [first, -1, -1, first]
    assert vcf_first_moves(game, states[:0]).shape == (0,)
    assert vcf_first_moves(game, states[:1], max_depth=2).tolist() == [-1]
    assert vcf_first_moves(game, states[:2], max_depth=4, max_nodes=BIG_BUDGET, shortest=False)[0] >= 0


def test_tictactoe_fork_is_a_double_four():
    game = make_game("tictactoe")
    state = game.play_moves([0, 4, 8, 2])[0]          # X: 0, 8; O: 4, 2 threatens 6 -> X blocks with a fork
    result = find_vcf(game, state)
    assert result.moves == (6,) and result.finish == (3, 7)
    assert attacker_wins(game, state, result.moves)


@pytest.mark.parametrize("name", ["connect4", "othello"])
def test_other_games_are_refused(name):
    game = make_game(name)
    with pytest.raises(SearchError, match="Gomoku"):
        find_vcf(game, game.initial_states(1)[0])
    with pytest.raises(SearchError, match="Gomoku"):
        vcf_first_moves(game, game.initial_states(2))
    with pytest.raises(SearchError, match="Gomoku"):
        find_vcf_defence(game, game.initial_states(1)[0])


def test_bad_input_is_refused():
    game = GOMOKU_8
    state = game.initial_states(1)[0]
    with pytest.raises(SearchError, match="shape"):
        find_vcf(game, game.initial_states(2))
    with pytest.raises(SearchError, match="shape"):
        vcf_first_moves(game, state)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(SearchError, match="max_depth"):
            find_vcf(game, state, max_depth=bad)
        with pytest.raises(SearchError, match="max_nodes"):
            find_vcf(game, state, max_nodes=bad)
    over = game.play_moves([0, 8, 1, 9, 2, 10, 3, 11, 4])[0]
    with pytest.raises(SearchError, match="over"):
        find_vcf(game, over)
    assert find_vcf(game, state[None]).status is VcfStatus.NONE      # [1, S] is accepted
    nobody = state.copy()
    nobody[game.num_cells + F_PLAYER] = 0
    with pytest.raises(SearchError, match="player"):
        find_vcf_defence(game, nobody)
