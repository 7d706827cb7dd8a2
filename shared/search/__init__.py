"""Batched PUCT search (AlphaZero style) and self-play. Importable without torch.

    BatchedMCTS(game, evaluate, SearchConfig(...), rng).search(states, add_noise) -> SearchResult
    choose_moves(result, temperature, rng) -> actions (proven wins first, never an avoidable proven loss)
    play_selfplay_games(game, evaluate, num_games, SelfPlayConfig(search=...), rng) -> SelfPlayRecords
    opening_set(game, count, seed) -> openings for matches

Modules, each with one job: types (SearchConfig, SearchResult, Evaluator), mcts (BatchedMCTS), priors
(masked_softmax, dirichlet_noise), action_selection (select_actions, choose_moves, pick_among_best), tree /
puct / backup / reuse (the tree storage and its compiled kernels), gumbel (the Gumbel AlphaZero root of
SearchConfig.root = "gumbel"), selfplay, openings, rollout, root_solver.
Players and matches between them are in shared.players (shared.players.player, shared.players.arena), which
imports this package; nothing here imports shared.players.

Values are always from the point of view of the player to move; see mcts.py / puct.py / backup.py for the
sign conventions of the tree statistics.
"""
from __future__ import annotations

from shared.search.action_selection import choose_moves, pick_among_best, select_actions
from shared.search.errors import ArenaError, EvaluatorError, SearchError
from shared.search.mcts import BatchedMCTS
from shared.search.openings import opening_set
from shared.search.priors import dirichlet_noise, masked_softmax
from shared.search.rollout import RolloutEvaluator
from shared.search.selfplay import SelfPlayConfig, SelfPlayRecords, play_selfplay_games
from shared.search.tree import NO_ACTION, NO_PARENT, ROOT, UNVISITED
from shared.search.types import Evaluator, SearchConfig, SearchResult

__all__ = [
    "ArenaError", "BatchedMCTS", "Evaluator", "EvaluatorError", "NO_ACTION", "NO_PARENT", "ROOT",
    "RolloutEvaluator", "SearchConfig", "SearchError", "SearchResult", "SelfPlayConfig", "SelfPlayRecords",
    "UNVISITED", "choose_moves", "dirichlet_noise", "masked_softmax", "opening_set", "pick_among_best",
    "play_selfplay_games", "select_actions",
]
