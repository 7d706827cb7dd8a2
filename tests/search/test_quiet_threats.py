"""The quiet-threat check at the root (shared.games.gomoku.threats): a move of the opponent that is not a four (here a
double open three) but leaves a VCF nobody can stop is seen one move ahead, and the side to move pre-empts it."""
from __future__ import annotations

import numpy as np

from shared.players.player import MCTSPlayer
from shared.search import SearchConfig
from shared.games.gomoku.threats import QUIET_MIN_SIMULATIONS, quiet_threat_cells, quiet_threat_move
from shared.games.gomoku.vcf import DefenceStatus, find_vcf, find_vcf_defence
from tests.search.test_threats import UniformEvaluator
from tests.search.test_vcf import GOMOKU_15, cell, position


def _fork_position() -> np.ndarray:
    """O to move; X has two open twos, X X on row 7 and X above X in column 8, that (7, 8) joins into two open
    threes at once; O's three stones are in far corners."""
    rows = [["."] * 15 for _ in range(15)]
    for r, c in ((7, 6), (7, 7), (8, 8), (9, 8)):
        rows[r][c] = "X"
    for r, c in ((0, 0), (0, 14), (14, 0)):
        rows[r][c] = "O"
    return position(GOMOKU_15, "\n".join("".join(row) for row in rows), to_move=-1)


def _play(state: np.ndarray, *moves: int) -> np.ndarray:
    for move in moves:
        state = GOMOKU_15.step(state[None], np.array([move]))[0]
    return state


def test_the_fork_point_is_a_quiet_threat_and_really_wins():
    state, fork = _fork_position(), cell(GOMOKU_15, 7, 8)
    assert find_vcf_defence(GOMOKU_15, state).status is DefenceStatus.NO_THREAT     # no four, no VCF for X yet
    assert fork in quiet_threat_cells(GOMOKU_15, state)
    far = cell(GOMOKU_15, 14, 14)
    forked = _play(state, far, fork)
    replies = np.flatnonzero(GOMOKU_15.legal_mask(forked[None])[0])
    # whatever O answers the fork with, X then has a VCF (checked over every reply)
    assert all(find_vcf(GOMOKU_15, _play(forked, int(r))).found for r in replies)


def test_the_check_replaces_a_move_that_ignores_the_threat():
    state, fork = _fork_position(), cell(GOMOKU_15, 7, 8)
    far = cell(GOMOKU_15, 14, 14)
    visits = np.zeros(GOMOKU_15.num_actions, np.float32)
    move = quiet_threat_move(GOMOKU_15, state, far, visits)
    assert move != far
    after = _play(state, move)
    if move != fork:
        # X's fork no longer leaves an unstoppable VCF
        assert find_vcf_defence(GOMOKU_15, _play(after, fork)).status not in (DefenceStatus.LOST,
                                                                               DefenceStatus.NO_DEFENCE)


def test_a_quiet_position_keeps_the_search_move():
    state = _fork_position()
    state[: GOMOKU_15.num_cells] = 0
    state[cell(GOMOKU_15, 7, 7)] = 1
    move = cell(GOMOKU_15, 3, 3)
    assert quiet_threat_cells(GOMOKU_15, state) == []
    assert quiet_threat_move(GOMOKU_15, state, move, np.zeros(GOMOKU_15.num_actions, np.float32)) == move


def test_players_of_large_searches_pre_empt_the_fork():
    state, fork = _fork_position(), cell(GOMOKU_15, 7, 8)
    player = MCTSPlayer(GOMOKU_15, UniformEvaluator(GOMOKU_15), SearchConfig(num_simulations=QUIET_MIN_SIMULATIONS))
    move = int(player.select_actions(state[None])[0])
    after = _play(state, move)
    if move != fork:
        assert find_vcf_defence(GOMOKU_15, _play(after, fork)).status not in (DefenceStatus.LOST,
                                                                               DefenceStatus.NO_DEFENCE)
