"""shared.games.vcf_labels: the brute-force VCF labeller against the step-based reference of the VCF solver's
tests, and the sampled positions are of the kind they claim."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import F_PLAYER
from shared.games.vcf_labels import VCF_DEPTH, five_cells, label_vcf_position, vcf_tactic_positions, vcf_wins
from tests.search.test_vcf import random_positions, reference_vcf, winning_cells

GOMOKU_6, GOMOKU_8 = make_game("gomoku-6x6-4"), make_game("gomoku-8x8-5")


@pytest.mark.integration   # a brute force over whole boards, at three depths
@pytest.mark.parametrize("game,plies,count,seed", [(GOMOKU_6, (6, 22), 80, 4), (GOMOKU_8, (10, 30), 40, 5)],
                         ids=["6x6", "8x8"])
def test_the_labeller_agrees_with_the_step_based_reference(game, plies, count, seed) -> None:
    seen = set()
    for state in random_positions(game, count, plies, seed):
        board, me = state[: game.num_cells], int(state[game.num_cells + F_PLAYER])
        for depth in (1, 2, 3):
            expected = reference_vcf(game, state, depth)
            assert vcf_wins(game, board, me, depth) == expected, (depth, game.render(state))
            seen.add((depth, expected))
    assert {(3, True), (3, False), (1, False)} <= seen


def test_five_cells_are_the_rules_winning_cells() -> None:
    states = np.stack(random_positions(GOMOKU_8, 30, (10, 40), 6))
    for colour in (1, -1):
        np.testing.assert_array_equal(five_cells(GOMOKU_8, states[:, : GOMOKU_8.num_cells], colour),
                                      winning_cells(GOMOKU_8, states, colour))


def test_sampled_positions_are_of_their_kind_by_the_reference() -> None:
    game = GOMOKU_6
    states, kinds, good, labelled = vcf_tactic_positions(game, 6, np.random.default_rng(3))
    assert labelled >= states.shape[0] and np.bincount(kinds, minlength=2).tolist() == [6, 6]
    for state, kind, moves in zip(states, kinds, good):
        me = int(state[game.num_cells + F_PLAYER])
        assert not winning_cells(game, state[None], me)[0].any() and not winning_cells(game, state[None], -me)[0].any()
        legal = np.flatnonzero(state[: game.num_cells] == 0)
        assert moves.any() and not moves[state[: game.num_cells] != 0].any()
        for move in legal:
            after = game.step(state[None], np.array([move]))[0]
            if kind == 0:         # a good move starts a VCF: the opponent's every reply leaves one within depth - 1
                assert reference_vcf(game, state, VCF_DEPTH)
                replies = np.flatnonzero(after[: game.num_cells] == 0)
                kids = game.step(np.repeat(after[None], replies.size, axis=0), replies)
                forced = [kid for kid in kids if not winning_cells(game, kid[None], me)[0].any()]
                starts = (winning_cells(game, after[None], me)[0].any()
                          and not winning_cells(game, after[None], -me)[0].any()
                          and all(reference_vcf(game, kid, VCF_DEPTH - 1) for kid in forced))
                assert moves[move] == starts, (move, game.render(state))
            else:                 # a good move leaves the opponent (to move) no VCF within the depth
                flipped = state.copy()
                flipped[game.num_cells + F_PLAYER] = -me
                assert not reference_vcf(game, state, VCF_DEPTH) and reference_vcf(game, flipped, VCF_DEPTH)
                assert not winning_cells(game, after[None], me)[0].any()       # no move of its own is a four
                assert moves[move] == (not reference_vcf(game, after, VCF_DEPTH)), (move, game.render(state))


def test_labels_refuse_positions_of_the_one_move_kinds() -> None:
    # X to move with a five cell (win in 1) and O to move facing it (must block) are left to the other kinds.
    state = GOMOKU_6.play_moves(GOMOKU_6.parse_moves("a1 f6 b1 f5 c1"))     # O to move, X threatens d1
    assert label_vcf_position(GOMOKU_6, state[0]) is None
    state = GOMOKU_6.play_moves(GOMOKU_6.parse_moves("a1 f6 b1 f5 c1 f4"))  # X to move, wins at d1
    assert label_vcf_position(GOMOKU_6, state[0]) is None


def test_sampling_stops_after_its_game_budget_on_a_board_too_small_for_a_kind() -> None:
    tictactoe = make_game("tictactoe")
    states, kinds, good, labelled = vcf_tactic_positions(tictactoe, 3, np.random.default_rng(0), max_games=60)
    assert labelled <= 60 and (kinds == 1).sum() == 0          # on 3x3 the defender nearly always has a four: none here
    assert states.shape[0] == kinds.size == good.shape[0]
