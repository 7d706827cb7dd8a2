"""Players and matches: baselines' strength, perfect play, pairing and colour-swap bookkeeping."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import GameError, make_game
from shared.games.base import F_WINNER
from shared.games.tictactoe.minimax import MinimaxPlayer
from shared.players.arena import MatchStopped, play_match
from shared.players.player import MCTSPlayer, PureMCTSPlayer, RandomPlayer
from shared.search import ArenaError, RolloutEvaluator, SearchConfig, opening_set
from shared.stats import evaluate_pairs
from tests.search.helpers import HashEvaluator


class FirstLegalPlayer:
    """Deterministic: the lowest legal action; records the batch sizes it was called with."""

    def __init__(self, game, name="first-legal"):
        self.game, self.name, self.batches, self.resets = game, name, [], 0

    def select_actions(self, states):
        self.batches.append(states.shape[0])
        return self.game.legal_mask(states).argmax(axis=1)

    def reset(self):
        self.resets += 1


def test_pure_mcts_clearly_beats_random_at_tictactoe() -> None:
    game = make_game("tictactoe")
    pure = PureMCTSPlayer(game, 300, np.random.default_rng(0))
    result = play_match(game, pure, RandomPlayer(game, np.random.default_rng(1)), [[]] * 10)
    stats = evaluate_pairs(result.game_scores)
    assert stats.losses == 0 and stats.wins >= 14, stats


def test_minimax_never_loses_to_random_and_draws_itself() -> None:
    game = make_game("tictactoe")
    perfect = MinimaxPlayer(game)
    versus_random = play_match(game, perfect, RandomPlayer(game, np.random.default_rng(2)), [[]] * 30)
    stats = evaluate_pairs(versus_random.game_scores)
    assert stats.losses == 0 and stats.wins >= 45
    versus_self = play_match(game, perfect, MinimaxPlayer(game, np.random.default_rng(3)), [[]] * 5)
    assert (versus_self.game_scores == 0.5).all() and versus_self.game_scores.size == 10


def test_minimax_refuses_other_games() -> None:
    with pytest.raises(GameError, match="tictactoe"):
        MinimaxPlayer(make_game("connect4"))


def test_match_pairs_openings_with_colours_swapped() -> None:
    game = make_game("connect4")
    a, b = FirstLegalPlayer(game, "a"), RandomPlayer(game, np.random.default_rng(4))
    openings = opening_set(game, 3, seed=7)
    result = play_match(game, a, b, openings, games_per_opening=4)
    assert len(result.games) == 12 and result.game_scores.shape == (6, 2) and a.resets == 1
    for j, record in enumerate(result.games):
        assert record.opening_index == j // 4 and record.a_plays_first == (j % 2 == 0)
        assert record.moves[: record.opening_length] == openings[j // 4]
        final = game.play_moves(record.moves)
        assert game.is_terminal(final)[0]
        winner = int(final[0, game.num_cells + F_WINNER])
        assert record.result == (winner if record.a_plays_first else -winner)
    points = [(g.result + 1) / 2 for g in result.games]
    assert result.game_scores.tolist() == [[points[2 * k], points[2 * k + 1]] for k in range(6)]
    # Batched: at the first turn A moves in its 6 games at once; one state per move A made in all.
    assert a.batches[0] == 6
    a_moves = sum(len(g.moves[g.opening_length:][(0 if g.a_plays_first else 1)::2]) for g in result.games)
    assert sum(a.batches) == a_moves


def test_match_rejects_odd_games_per_opening_and_illegal_moves() -> None:
    game = make_game("tictactoe")
    player = RandomPlayer(game, np.random.default_rng(0))
    with pytest.raises(ArenaError, match="even"):
        play_match(game, player, player, [[]], games_per_opening=3)

    class Cheater(FirstLegalPlayer):
        def select_actions(self, states):
            return np.zeros(states.shape[0], np.int64)                 # square 1 again and again

    with pytest.raises(ArenaError, match="illegal"):
        play_match(game, Cheater(game), player, [[]])


def test_mcts_player_and_rollout_values() -> None:
    game = make_game("tictactoe")
    player = MCTSPlayer(game, HashEvaluator(game), SearchConfig(num_simulations=20))
    states = np.concatenate([game.play_moves(m) for m in ([], [4], [0, 4, 8])])
    actions = player.select_actions(states)
    assert game.legal_mask(states)[np.arange(3), actions].all()
    rollout = RolloutEvaluator(game, np.random.default_rng(0))
    x_wins_with_the_last_square = game.play_moves([0, 1, 2, 3, 4, 5, 7, 6])   # square 9 completes 1-5-9
    draw_with_the_last_square = game.play_moves([0, 3, 1, 4, 6, 2, 5, 7])
    logits, values = rollout(np.concatenate([x_wins_with_the_last_square, draw_with_the_last_square]))
    assert values.tolist() == [1.0, 0.0] and not logits.any()      # from the side to move (X)
    finals = rollout.random_playouts(game.initial_states(50))
    assert game.is_terminal(finals).all()
    _, start_values = rollout(game.initial_states(400))
    assert 0.1 < start_values.mean() < 0.5                          # random play favours the first player


def test_a_match_stops_before_the_turn_at_which_stop_says_so() -> None:
    game = make_game("connect4")
    player = FirstLegalPlayer(game)
    asked = []

    def stop_at_turn_3() -> bool:
        asked.append(len(player.batches))
        return len(asked) > 3

    with pytest.raises(MatchStopped) as stopped:
        play_match(game, player, RandomPlayer(game, np.random.default_rng(5)), [[]] * 2, stop=stop_at_turn_3)
    assert stopped.value.turns == 3 and asked == [0, 1, 2, 3]       # asked before every turn, none played after
    never = play_match(game, player, RandomPlayer(game, np.random.default_rng(5)), [[]] * 2, stop=lambda: False)
    assert all(game.is_terminal(game.play_moves(g.moves))[0] for g in never.games)
