"""Matches between two players: every opening played in colour-swapped pairs, all games in one batch.

Game j of a match uses opening j // games_per_opening; within an opening, games alternate colours: even j has
player A on the first player's side (+1 stones), odd j has B there. Games 2k and 2k+1 form a pair (same opening,
colours swapped); `MatchResult.game_scores` gives A's points per game (win 1, draw 0.5, loss 0) pair by pair,
and shared.stats turns them into pair scores and W/D/L.
At each turn the unfinished games are grouped by the player to move and each player is called once with its
group's states. A `stop` callable, asked before every turn, can end a match half-way (MatchStopped): a gate
that no longer needs a chunk stops it (services.gatekeeper.match_job).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from shared.games.base import F_WINNER, Game
from shared.players.player import Player
from shared.search.errors import ArenaError
from shared.search.selfplay import game_length_bound

__all__ = ["MatchGame", "MatchResult", "MatchStopped", "play_match"]


class MatchStopped(Exception):
    """play_match's `stop` said True: the match ended before its games did (they have no results)."""

    def __init__(self, turns: int) -> None:
        super().__init__(f"match stopped after {turns} turns")
        self.turns = turns


@dataclass
class MatchGame:
    """One game of a match."""

    opening_index: int
    a_plays_first: bool      # A has the first player's side (+1 stones), whatever the opening's length
    result: int              # from A's side: +1 win, 0 draw, -1 loss
    moves: list[int]         # every action of the game, the opening's included
    opening_length: int


@dataclass
class MatchResult:
    """All games of a match, in play order (games 2k and 2k + 1 are the two games of one pair)."""

    player_a: str
    player_b: str
    games: list[MatchGame]

    @property
    def game_scores(self) -> np.ndarray:
        """A's points per game, [P, 2] float64 (win 1, draw 0.5, loss 0); row k = games 2k (A first), 2k + 1."""
        results = np.array([g.result for g in self.games], dtype=np.float64)    # +1/0/-1 from A's side
        return ((results + 1.0) / 2.0).reshape(-1, 2)


def _opening_states(game: Game, openings: list[list[int]], games_per_opening: int) -> np.ndarray:
    """Start positions of every game: [len(openings) * games_per_opening, S] int16."""
    starts = []
    for i, opening in enumerate(openings):
        state = game.play_moves(list(opening))
        if game.is_terminal(state)[0]:
            raise ArenaError(f"opening {i} ({game.moves_to_str(list(opening))}) ends the game; use a shorter one")
        starts.append(state)
    return np.repeat(np.concatenate(starts), games_per_opening, axis=0)


def _ask_players(game: Game, players: tuple[Player, Player], states: np.ndarray, active: np.ndarray,
                 a_first: np.ndarray) -> np.ndarray:
    """One batched call per player for the active games it must move in; returns actions [G] int64 (-1 idle)."""
    actions = np.full(states.shape[0], -1, np.int64)
    a_to_move = (game.to_play(states) == 1) == a_first
    for player, mask in ((players[0], active & a_to_move), (players[1], active & ~a_to_move)):
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            continue
        chosen = np.asarray(player.select_actions(states[idx]), np.int64).reshape(-1)
        if chosen.shape != idx.shape:
            raise ArenaError(f"player {player.name} returned {chosen.shape[0]} actions for {idx.size} states")
        legal = game.legal_mask(states[idx])
        ok = (chosen >= 0) & (chosen < game.num_actions)
        if not (ok.all() and legal[np.arange(idx.size), chosen].all()):
            bad = int(np.flatnonzero(~ok | ~legal[np.arange(idx.size), np.clip(chosen, 0, game.num_actions - 1)])[0])
            raise ArenaError(f"player {player.name} chose illegal action {chosen[bad]} in game {idx[bad]}")
        actions[idx] = chosen
    return actions


def play_match(game: Game, player_a: Player, player_b: Player, openings: list[list[int]],
               games_per_opening: int = 2, stop: Callable[[], bool] | None = None) -> MatchResult:
    """Play every opening `games_per_opening` times (an even number >= 2), colours alternating; see module doc.
    MatchStopped as soon as `stop()` says True before a turn (None: never stop)."""
    if games_per_opening < 2 or games_per_opening % 2:
        raise ArenaError(f"games_per_opening must be an even number >= 2 (got {games_per_opening})")
    if not openings:
        raise ArenaError("no openings given; use opening_set(game, count, seed) or [[]] for the start position")
    states = _opening_states(game, openings, games_per_opening)            # [G, S] int16
    num = states.shape[0]
    a_first = np.arange(num) % 2 == 0
    moves = [list(openings[j // games_per_opening]) for j in range(num)]
    active = ~game.is_terminal(states)
    player_a.reset()
    player_b.reset()
    for turn in range(game_length_bound(game)):
        if not active.any():
            break
        if stop is not None and stop():
            raise MatchStopped(turn)
        actions = _ask_players(game, (player_a, player_b), states, active, a_first)
        idx = np.flatnonzero(active)
        states[idx] = game.step(states[idx], actions[idx])
        for j, action in zip(idx.tolist(), actions[idx].tolist()):
            moves[j].append(action)
        active[idx] = ~game.is_terminal(states[idx])
    # Unfinished games after the cap (never with the built-in games) count as draws.
    winners = np.where(game.is_terminal(states), states[:, game.num_cells + F_WINNER], 0)
    results = winners * np.where(a_first, 1, -1)                            # from A's side
    games = [MatchGame(j // games_per_opening, bool(a_first[j]), int(results[j]), moves[j],
                       len(openings[j // games_per_opening])) for j in range(num)]
    return MatchResult(player_a.name, player_b.name, games)
