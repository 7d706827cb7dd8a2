"""Batched PUCT search (AlphaZero style), self-play, players and matches. Importable without torch.

    BatchedMCTS(game, evaluate, SearchConfig(...), rng).search(states, add_noise) -> SearchResult
    choose_moves(result, temperature, rng) -> actions (proven wins first, never an avoidable proven loss)
    play_selfplay_games(game, evaluate, num_games, SelfPlayConfig(search=...), rng) -> SelfPlayRecords
    play_match(game, player_a, player_b, opening_set(game, count, seed)) -> MatchResult

Values are always from the point of view of the player to move; see mcts.py / puct.py / backup.py for the
sign conventions of the tree statistics.
"""
from __future__ import annotations

from shared.search.arena import MatchGame, MatchResult, play_match
from shared.search.errors import ArenaError, EvaluatorError, SearchError
from shared.search.mcts import BatchedMCTS, Evaluator, SearchConfig, SearchResult
from shared.search.openings import opening_set
from shared.search.players import MCTSPlayer, Player, PureMCTSPlayer, RandomPlayer
from shared.search.policy import choose_moves, masked_softmax, select_actions
from shared.search.rollout import RolloutEvaluator
from shared.search.selfplay import SelfPlayConfig, SelfPlayRecords, play_selfplay_games
from shared.search.tree import NO_ACTION, NO_PARENT, ROOT, UNVISITED

__all__ = [
    "ArenaError", "BatchedMCTS", "Evaluator", "EvaluatorError", "MCTSPlayer", "MatchGame", "MatchResult",
    "NO_ACTION", "NO_PARENT", "Player", "PureMCTSPlayer", "ROOT", "RandomPlayer",
    "RolloutEvaluator", "SearchConfig", "SearchError", "SearchResult", "SelfPlayConfig", "SelfPlayRecords",
    "UNVISITED", "choose_moves", "masked_softmax", "opening_set", "play_match", "play_selfplay_games", "select_actions",
]
