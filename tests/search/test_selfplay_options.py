"""Self-play options: resignation (with the false-resignation measurement), playout cap randomisation and random
openings."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import make_game
from shared.games.base import F_PLAYER, F_WINNER
from shared.search import SearchConfig, SearchError, SearchResult, SelfPlayConfig, play_selfplay_games
from shared.search.mcts import BatchedMCTS
from shared.search.openings import random_opening_states
from shared.search.selfplay import _new_games, _resignations
from shared.shards.gameinfo import game_info_from_records, resign_counts
from shared.shards.validate import validate_records
from tests.search.helpers import HashEvaluator


class SideEvaluator:
    """Zero logits; value `first` for positions with the first player to move and -`first` otherwise (each from
    the side to move), so the root value of every search is about `first` or -`first` as well."""

    def __init__(self, game, first: float) -> None:
        self.game, self.first = game, np.float32(first)

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        to_move = states[:, self.game.num_cells + F_PLAYER].astype(np.float32)
        return np.zeros((states.shape[0], self.game.num_actions), np.float32), self.first * to_move


def _selfplay(evaluator_first: float, num_games: int, seed: int = 0, **options):
    game = make_game("tictactoe")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=12, solver=False), **options)
    return game, play_selfplay_games(game, SideEvaluator(game, evaluator_first), num_games, config,
                                     np.random.default_rng(seed))


def test_a_losing_side_resigns_at_once_and_the_opponent_wins() -> None:
    # The second player sees -0.95 in every position: it resigns at its first move (ply 1).
    game, rec = _selfplay(0.95, 6, resign_threshold=-0.9, resign_disabled_fraction=0.0)
    assert rec.resigned.all() and not rec.resign_disabled.any()
    assert rec.plies.tolist() == [1] * 6 and rec.game_lengths.tolist() == [1] * 6
    assert rec.results.tolist() == [1] * 6                         # the first player wins every resigned game
    assert rec.would_resign_ply.tolist() == [1] * 6 and rec.would_resign_player.tolist() == [-1] * 6
    # the one recorded position per game is ply 0, first player to move: z = +1 (it won)
    assert rec.move_number.tolist() == [0] * 6 and rec.z.tolist() == [1.0] * 6
    counts = resign_counts(game_info_from_records(rec, rec.game_lengths), rec.results)
    assert (counts.resigned_games, counts.no_resign_games, counts.would_resign_games) == (6, 0, 0)


def test_the_first_player_resigning_gives_minus_one_and_no_rows() -> None:
    _, rec = _selfplay(-0.95, 3, resign_threshold=-0.9, resign_disabled_fraction=0.0)
    assert rec.resigned.all() and rec.results.tolist() == [-1, -1, -1] and rec.states.shape[0] == 0
    assert rec.plies.tolist() == [0, 0, 0]


def test_resign_disabled_games_play_on_and_note_where_they_would_have_resigned() -> None:
    game, rec = _selfplay(0.95, 200, seed=1, resign_threshold=-0.9, resign_disabled_fraction=0.3)
    disabled = rec.resign_disabled
    assert 0.2 < disabled.mean() < 0.4                              # 60 expected, sd 6.5
    assert not (rec.resigned & disabled).any() and rec.resigned[~disabled].all()
    assert (rec.plies[disabled] >= 5).all()                          # played to the end (a win needs 5 plies)
    assert (rec.game_lengths == rec.plies).all()                     # every ply recorded
    assert (rec.would_resign_ply == 1).all() and (rec.would_resign_player == -1).all()
    counts = resign_counts(game_info_from_records(rec, rec.game_lengths), rec.results)
    second_won_or_drew = int((disabled & (rec.results <= 0)).sum())
    assert counts.no_resign_games == counts.would_resign_games == int(disabled.sum())
    assert counts.false_resignations == second_won_or_drew
    assert counts.resigned_games == int((~disabled).sum())
    for g in np.flatnonzero(disabled)[:5]:                           # unresigned games replay to their result
        final = game.play_moves(rec.action[rec.game_id == g].astype(int).tolist())
        assert game.is_terminal(final)[0]


@pytest.mark.parametrize("fraction, disabled", [(0.0, 0), (1.0, 20)])
def test_resign_disabled_fraction_bounds(fraction, disabled) -> None:
    _, rec = _selfplay(0.95, 20, resign_threshold=-0.9, resign_disabled_fraction=fraction)
    assert int(rec.resign_disabled.sum()) == disabled and int(rec.resigned.sum()) == 20 - disabled


def test_false_resignations_counted_in_a_constructed_case() -> None:
    from shared.shards import schema

    info = np.zeros(6, schema.GAME_INFO_DTYPE)
    info["plies"] = 9
    info["would_resign_ply"] = [3, 4, 5, -1, 2, 6]
    info["would_resign_player"] = [-1, 1, 1, 0, 1, -1]
    info["resign_disabled"] = [1, 1, 1, 1, 0, 1]
    info["resigned"] = [0, 0, 0, 0, 1, 0]
    winners = np.array([-1, -1, 0, 1, -1, 1], np.int8)
    # game 0: the would-be resigner (second) won -> false; game 1: first would resign and lost -> right;
    # game 2: a draw -> false; game 3: never fired; game 4: resigned (not disabled); game 5: second lost -> right
    counts = resign_counts(info, winners)
    assert counts.as_dict() == {"resigned_games": 1, "no_resign_games": 5, "would_resign_games": 4,
                                "false_resignations": 2}


def test_a_proven_lost_root_resigns_whatever_its_value() -> None:
    game = make_game("tictactoe")
    config = SelfPlayConfig(search=SearchConfig(), resign_threshold=-0.99, resign_disabled_fraction=0.0)
    track = _new_games(game, 3, config, np.random.default_rng(0))
    zeros = np.zeros((3, game.num_actions), np.float32)
    result = SearchResult(zeros, np.array([0.5, -0.995, 0.2], np.float32), zeros, zeros,
                          proven_value=np.array([-1, 0, 1], np.int8))
    resign = _resignations(config, track, np.arange(3), result, np.array([1, -1, 1], np.int8))
    assert resign.tolist() == [True, True, False] and track.resigned.tolist() == [True, True, False]


def test_resignation_off_draws_nothing_and_never_resigns() -> None:
    _, off = _selfplay(0.95, 4, seed=2)
    assert not off.resigned.any() and (off.would_resign_ply == -1).all() and not off.resign_disabled.any()


def test_go_selfplay_games_end_by_two_passes_the_cap_or_a_resignation() -> None:
    """Resignation changes no Go rule: an unresigned game is over only after two passes in a row (or the cap)."""
    game = make_game("go-5x5")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=8), temperature_moves=50, resign_threshold=-0.5,
                            resign_disabled_fraction=0.5)
    rec = play_selfplay_games(game, HashEvaluator(game, seed=4), 6, config, np.random.default_rng(3))
    for g in range(6):
        actions = rec.action[rec.game_id == g].astype(int).tolist()
        final = game.play_moves(actions)
        if rec.resigned[g]:
            assert not game.is_terminal(final)[0]
            continue
        assert game.is_terminal(final)[0]
        assert actions[-2:] == [game.pass_action] * 2 or len(actions) == game.max_moves
        assert rec.results[g] == final[0, game.num_cells + F_WINNER]      # the exact area score's winner


# ----- playout cap randomisation -------------------------------------------------------------------------------
def _capped(num_games: int, fraction: float, fast: int | None, seed: int = 7, sims: int = 16):
    game = make_game("gomoku-6x6-4")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=sims), temperature_moves=4,
                            full_search_fraction=fraction, fast_simulations=fast)
    return play_selfplay_games(game, HashEvaluator(game, seed=2), num_games, config, np.random.default_rng(seed))


def test_full_search_fraction_one_plays_exactly_the_default_games() -> None:
    plain, capped_off = _capped(4, 1.0, None), _capped(4, 1.0, 3)
    np.testing.assert_array_equal(plain.action, capped_off.action)
    np.testing.assert_array_equal(plain.pi, capped_off.pi)
    assert (plain.game_lengths == plain.plies).all()


def test_only_full_searches_are_recorded(monkeypatch) -> None:
    calls = []
    real = BatchedMCTS.search

    def logged(self, states, add_noise, num_simulations=None, slots=None):
        calls.append((states.shape[0], add_noise, num_simulations))
        return real(self, states, add_noise, num_simulations, slots)

    monkeypatch.setattr(BatchedMCTS, "search", logged)
    rec = _capped(12, 0.25, 5, sims=16)
    full = sum(n for n, noise, sims in calls if noise)
    fast = sum(n for n, noise, sims in calls if not noise)
    assert all(sims is None for n, noise, sims in calls if noise and n)      # full: config's 16, with noise
    assert all(sims == 5 for n, noise, sims in calls if not noise and n)     # fast: 5, without noise
    assert rec.states.shape[0] == full and full + fast == int(rec.plies.sum())
    assert 0.15 < full / (full + fast) < 0.35
    assert (rec.visit_count >= 16).all()                                      # every recorded row searched in full
    assert (rec.game_lengths <= rec.plies).all() and (rec.game_lengths < rec.plies).any()
    for g in range(12):                                                       # true plies, increasing, with gaps
        numbers = rec.move_number[rec.game_id == g]
        assert (np.diff(numbers) > 0).all() and (numbers < rec.plies[g]).all()


def test_fast_simulations_default_and_bounds() -> None:
    assert SelfPlayConfig(search=SearchConfig(num_simulations=100)).fast_search_simulations == 25
    assert SelfPlayConfig(search=SearchConfig(num_simulations=3)).fast_search_simulations == 1
    with pytest.raises(SearchError, match="fast_simulations must be in"):
        SelfPlayConfig(search=SearchConfig(num_simulations=10), fast_simulations=11)
    with pytest.raises(SearchError, match="full_search_fraction must be in"):
        SelfPlayConfig(search=SearchConfig(), full_search_fraction=0.0)
    with pytest.raises(SearchError, match="resign_threshold must be in"):
        SelfPlayConfig(search=SearchConfig(), resign_threshold=-1.0)


def test_both_options_with_overlapped_game_groups() -> None:
    """The two overlap groups share the per-game resign state; each game's record stays consistent."""
    game = make_game("gomoku-6x6-4")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=12), temperature_moves=4, overlap=True,
                            resign_threshold=-0.3, resign_disabled_fraction=0.5, full_search_fraction=0.5)
    rec = play_selfplay_games(game, HashEvaluator(game, seed=1), 10, config, np.random.default_rng(6))
    assert rec.resigned.any() and not (rec.resigned & rec.resign_disabled).any()
    assert (rec.game_lengths == np.bincount(rec.game_id, minlength=10)).all() and (rec.game_lengths <= rec.plies).all()
    fired = rec.would_resign_ply >= 0
    assert (rec.would_resign_ply[rec.resigned] == rec.plies[rec.resigned]).all() and fired[rec.resigned].all()
    to_move = rec.states[:, game.num_cells + F_PLAYER]
    np.testing.assert_array_equal(rec.z, rec.results[rec.game_id] * to_move)
    resigner = rec.would_resign_player[rec.resigned]
    np.testing.assert_array_equal(rec.results[rec.resigned], -resigner)   # the resigner's opponent won


def test_random_openings_start_every_game_off_the_start_and_record_from_its_first_search() -> None:
    game = make_game("connect4")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=8), temperature_moves=4, random_opening_plies=(3,))
    rec = play_selfplay_games(game, HashEvaluator(game, seed=3), 16, config, np.random.default_rng(4))
    validate_records(game, rec)                                        # a valid shard's rows
    firsts = np.flatnonzero(np.diff(rec.game_id, prepend=-1) != 0)
    assert firsts.size == 16 and (rec.move_number[firsts] == 3).all()
    assert ((rec.states[firsts, : game.num_cells] != 0).sum(axis=1) == 3).all()   # three discs on the board
    assert len({rec.states[i, : game.num_cells].tobytes() for i in firsts}) > 8    # the openings differ
    assert (rec.game_lengths == rec.plies - 3).all()                   # every searched ply recorded, none before
    to_move = rec.states[:, game.num_cells + F_PLAYER]
    np.testing.assert_array_equal(rec.z, rec.results[rec.game_id] * to_move)


def test_random_opening_fraction_and_lengths_per_game() -> None:
    game = make_game("tictactoe")
    config = SelfPlayConfig(search=SearchConfig(num_simulations=4), random_opening_plies=(1, 2),
                            random_opening_fraction=0.5)
    rec = play_selfplay_games(game, HashEvaluator(game, seed=1), 200, config, np.random.default_rng(2))
    first = rec.move_number[np.flatnonzero(np.diff(rec.game_id, prepend=-1) != 0)]
    counts = np.bincount(first, minlength=3)
    assert counts.sum() == 200 and 70 < counts[0] < 130                # half the games from the start (100, sd 7)
    assert counts[1] > 25 and counts[2] > 25                           # the others 1 or 2 random moves (50 each)


def test_random_opening_states_never_end_a_game() -> None:
    game = make_game("tictactoe")
    lengths = np.array([9] * 300 + [0, 4])
    states, plies = random_opening_states(game, lengths, np.random.default_rng(5))
    assert not game.is_terminal(states).any()
    assert (plies[:300] <= 8).all() and (plies[:300] >= 4).all() and plies[300:].tolist() == [0, 4]
    np.testing.assert_array_equal((states[:, : game.num_cells] != 0).sum(axis=1), plies)
    np.testing.assert_array_equal(states[300], game.initial_states(1)[0])


def test_random_opening_settings_are_checked() -> None:
    with pytest.raises(SearchError, match="random_opening_plies must be ply counts >= 1"):
        SelfPlayConfig(search=SearchConfig(), random_opening_plies=(0, 2))
    with pytest.raises(SearchError, match="random_opening_fraction must be in"):
        SelfPlayConfig(search=SearchConfig(), random_opening_plies=(2,), random_opening_fraction=0.0)
