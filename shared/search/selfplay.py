"""Self-play: play many games at once with one batched search, recording training positions.

Game g uses tree slot g of one `BatchedMCTS`; each move searches only the unfinished games (their slots), with
Dirichlet noise at the roots, then plays a move chosen by `choose_moves` (a proven win at once, never a proven
loss when avoidable, else from the root visits with temperature 1.0 for the first `temperature_moves` plies,
`temperature_final` after) and advances the trees (reuse per SearchConfig.reuse_tree).

Overlap (SelfPlayConfig.overlap): the games are split into two groups (even and odd game ids), each with its own
trees and its own random stream (`rng.spawn(2)`), played by two threads; the evaluator is called under a lock, so
while the network evaluates one group's leaves (torch releases the GIL in its kernels) the other group runs its
search steps (the numba kernels are compiled nogil). The games are the same in distribution, not move for move;
with overlap off (the default) the games are exactly those of one group over all games for the same seed.

Resignation (SelfPlayConfig.resign_threshold, off when None): the player to move resigns when the root search
value (its own view) is below the threshold or the solver proves the root lost; the game ends there, won by the
opponent, and the positions before that ply are recorded (z from that result). A fraction
`resign_disabled_fraction` of the games, drawn per game from the rng at the start, never resigns; for those the
first ply at which the side to move would have resigned is kept (`would_resign_ply`, `would_resign_player`) so
that false resignations (that player then won or drew) can be counted, as in AlphaGo Zero.

Playout cap randomisation (SelfPlayConfig.full_search_fraction p < 1, KataGo): each move of each game is a full
search (root noise, num_simulations) with probability p and recorded as a training position; otherwise a fast
search (fast_simulations, no noise) picks the move, which is played but not recorded. Two search calls per ply
(the full subset, then the fast subset of the trees). Recorded rows keep their true ply as move_number, so a
game's rows may skip plies (`game_lengths` counts rows, `plies` counts moves played).

Solved policy targets (SelfPlayConfig.solved_policy_target): the recorded pi is the search's policy with the
MCTS-solver's proofs applied (shared.search.action_selection.solved_policy): all of it on the proven winning moves
where there are some, none on proven losing moves while another move is not proven lost. The moves played are the
same either way (choose_moves already applies the proofs); only the training target changes.

Random openings (SelfPlayConfig.random_opening_plies, off when None): a share random_opening_fraction of the
games (one rng draw per game) start after a fresh opening of uniformly random legal moves, its length drawn from
random_opening_plies per game (shared.search.openings.random_opening_states): positions off the lines the search
keeps playing. The opening's plies are played, not searched or recorded; the game's rows start at its first
searched ply (move_number counts the opening's plies, as with playout caps), z is the game's result as usual, and
the temperature schedule counts plies from the game's start.

With every option off (no resign threshold, p = 1, no random openings) no extra random numbers are drawn: the
games are exactly those of the plain loop for the same seed.

Gumbel root (SearchConfig.root = "gumbel", shared.search.gumbel): the search draws Gumbel noise at the roots of
full searches instead of Dirichlet noise, chooses the move itself (argmax of g + logits + sigma(completed Q)
among the actions that survived sequential halving, solver rules included) and records its improved policy
softmax(logits + sigma(completed Q)) as pi. The temperature schedule (temperature_moves, temperature_final) has
no effect then: the Gumbel noise is the exploration at every move, as in mctx's gumbel_muzero_policy. Fast
(playout-capped) searches get no noise (g = 0): their move is the deterministic Gumbel choice. Tree reuse works
(see shared.search.mcts).
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from typing import Callable

import numpy as np

from shared.games.base import F_PLAYER, F_WINNER, Game
from shared.search.errors import SearchError
from shared.search.action_selection import choose_moves, solved_policy
from shared.search.mcts import BatchedMCTS
from shared.search.openings import random_opening_states
from shared.search.types import Evaluator, SearchConfig, SearchResult


@dataclass(frozen=True)
class SelfPlayConfig:
    """How self-play games are played (search settings plus the move-temperature schedule)."""

    search: SearchConfig
    temperature_moves: int = 8     # moves with temperature 1.0, then temperature_final
    temperature_final: float = 0.0
    max_moves: int | None = None   # safety cap in plies (None = game_length_bound); a capped game is a draw
    overlap: bool = False          # two game groups alternate between search and network (module docstring)
    resign_threshold: float | None = None   # resign below this root value, in (-1, 0); None = never resign
    resign_disabled_fraction: float = 0.1   # share of games that never resign (false-resignation measurement)
    full_search_fraction: float = 1.0       # playout caps: P(full, recorded search) per move; 1.0 = always
    fast_simulations: int | None = None     # simulations of a fast search (None = num_simulations // 4, min 1)
    solved_policy_target: bool = False      # record the policy with the solver's proofs applied (solved_policy)
    random_opening_plies: tuple[int, ...] | None = None   # random-move opening lengths per game; None = none
    random_opening_fraction: float = 1.0    # share of the games that start with a random opening

    def __post_init__(self) -> None:
        problems = []
        if self.resign_threshold is not None and not -1.0 < self.resign_threshold < 0.0:
            problems.append(f"resign_threshold must be in (-1, 0) or None (got {self.resign_threshold})")
        if not 0.0 <= self.resign_disabled_fraction <= 1.0:
            problems.append(f"resign_disabled_fraction must be in [0, 1] (got {self.resign_disabled_fraction})")
        if not 0.0 < self.full_search_fraction <= 1.0:
            problems.append(f"full_search_fraction must be in (0, 1] (got {self.full_search_fraction})")
        if self.fast_simulations is not None and not 1 <= self.fast_simulations <= self.search.num_simulations:
            problems.append(f"fast_simulations must be in [1, {self.search.num_simulations}] (the full search's "
                            f"simulations) or None (got {self.fast_simulations})")
        if self.random_opening_plies is not None and (not self.random_opening_plies
                                                      or min(self.random_opening_plies) < 1):
            problems.append(f"random_opening_plies must be ply counts >= 1 or None (got {self.random_opening_plies})")
        if not 0.0 < self.random_opening_fraction <= 1.0:
            problems.append(f"random_opening_fraction must be in (0, 1] (got {self.random_opening_fraction})")
        if problems:
            raise SearchError("invalid SelfPlayConfig: " + "; ".join(problems))

    @property
    def fast_search_simulations(self) -> int:
        """Simulations of a fast (unrecorded) search: fast_simulations, else num_simulations // 4, at least 1."""
        if self.fast_simulations is not None:
            return self.fast_simulations
        return max(1, self.search.num_simulations // 4)


@dataclass
class SelfPlayRecords:
    """One row per recorded position, sorted by (game_id, move_number); per-game arrays for G games.

    Every searched position is recorded except fast (playout-capped) searches and the position a player resigned
    in. The per-game fields after game_lengths are optional for callers that build records by hand: None means
    every ply recorded (plies = game_lengths) and no resignation.
    """

    states: np.ndarray        # [T, S] int16 position before the move
    pi: np.ndarray            # [T, A] float32 training policy: normalised root visits (PUCT root) or the Gumbel
                              # root's improved policy (SearchConfig.root, shared.search.gumbel)
    z: np.ndarray             # [T] float32 final result from the side to move at that position
    game_id: np.ndarray       # [T] int32 (0..num_games-1)
    move_number: np.ndarray   # [T] int16 (0-based ply)
    action: np.ndarray        # [T] int16 action played
    root_value: np.ndarray    # [T] float32 search value, side to move
    visit_count: np.ndarray   # [T] int32 root visits
    results: np.ndarray       # [G] int8 winner per game: +1 first player, -1 second, 0 draw (resigner's opponent wins)
    game_lengths: np.ndarray  # [G] int32 recorded rows per game
    plies: np.ndarray | None = None                # [G] int32 moves played (>= game_lengths)
    resigned: np.ndarray | None = None             # [G] bool: the game ended by a resignation
    resign_disabled: np.ndarray | None = None      # [G] bool: the game was not allowed to resign
    would_resign_ply: np.ndarray | None = None     # [G] int32 first ply the resign rule fired, -1 never
    would_resign_player: np.ndarray | None = None  # [G] int8 who was to move then (+1 first, -1 second), 0 never
    ownership: np.ndarray | None = None            # [G, H*W] int8 owner of each cell in the game's last position
                                                   # (+1 first player, -1 second, 0 no one); games with
                                                   # Game.has_ownership (Go) only, else None

    def __post_init__(self) -> None:
        games = np.asarray(self.game_lengths).shape[0]
        if self.plies is None:
            self.plies = np.asarray(self.game_lengths, np.int32).copy()
        for name, dtype, fill in (("resigned", bool, False), ("resign_disabled", bool, False),
                                  ("would_resign_ply", np.int32, -1), ("would_resign_player", np.int8, 0)):
            if getattr(self, name) is None:
                setattr(self, name, np.full(games, fill, dtype))


def game_length_bound(game: Game) -> int:
    """A safe upper bound on the plies of any game (cells + passes, doubled): the default move cap."""
    return 2 * (game.num_cells + game.num_actions) + 8


def _record_rows(rows: dict[str, list[np.ndarray]], idx: np.ndarray, states: np.ndarray, visits: np.ndarray,
                 policy: np.ndarray, actions: np.ndarray, root_value: np.ndarray, plies: np.ndarray) -> None:
    """Append one searched move per game in idx [K] to the column lists of `rows` (policy [K, A] float32: the
    search's training policy, SearchResult.policy)."""
    totals = visits.sum(axis=1)                                       # [K] float32, > 0 after a search
    rows["states"].append(states.copy())
    rows["pi"].append(policy.astype(np.float32, copy=True))
    rows["game_id"].append(idx.astype(np.int32))
    rows["move_number"].append(plies.astype(np.int16))
    rows["action"].append(actions.astype(np.int16))
    rows["root_value"].append(root_value.astype(np.float32))
    rows["visit_count"].append(totals.astype(np.int32))


def _empty_rows(game: Game) -> dict[str, list[np.ndarray]]:
    """Column lists for _record_rows, each starting with an empty chunk of its dtype (so zero rows concatenate)."""
    return {"states": [np.zeros((0, game.state_size), np.int16)],
            "pi": [np.zeros((0, game.num_actions), np.float32)], "game_id": [np.zeros(0, np.int32)],
            "move_number": [np.zeros(0, np.int16)], "action": [np.zeros(0, np.int16)],
            "root_value": [np.zeros(0, np.float32)], "visit_count": [np.zeros(0, np.int32)]}


@dataclass
class _Games:
    """The state of all G games, shared by the game groups (each touches only its own games' entries)."""

    states: np.ndarray               # [G, S] int16 current positions
    plies: np.ndarray                # [G] int32 moves played
    resign_disabled: np.ndarray      # [G] bool
    resigned: np.ndarray             # [G] bool
    would_resign_ply: np.ndarray     # [G] int32, -1 = the resign rule never fired
    would_resign_player: np.ndarray  # [G] int8, 0 = never


def _new_games(game: Game, num_games: int, config: SelfPlayConfig, rng: np.random.Generator) -> _Games:
    """Start positions: the initial one, or with random openings on a random opening for a share of the games
    (two rng draws per game, then the openings' moves); with resignation on, each game is resign-disabled with
    resign_disabled_fraction (one rng draw per game). No draws for options that are off, so the default games do
    not change."""
    states, plies = game.initial_states(num_games), np.zeros(num_games, np.int32)
    if config.random_opening_plies is not None:
        opened = rng.random(num_games) < config.random_opening_fraction
        lengths = np.where(opened, rng.choice(np.asarray(config.random_opening_plies), num_games), 0)
        states, plies = random_opening_states(game, lengths, rng)
    disabled = np.zeros(num_games, bool)
    if config.resign_threshold is not None:
        disabled = rng.random(num_games) < config.resign_disabled_fraction
    return _Games(states=states, plies=plies,
                  resign_disabled=disabled, resigned=np.zeros(num_games, bool),
                  would_resign_ply=np.full(num_games, -1, np.int32),
                  would_resign_player=np.zeros(num_games, np.int8))


def _finish_records(game: Game, rows: dict[str, list[np.ndarray]], track: _Games) -> SelfPlayRecords:
    """Concatenate the columns, sort by (game, ply) and fill z from each position's side to move.

    Winners: the game's result when it is over; the opponent of the player to move in a resigned game; 0 (a
    draw) for a game stopped by the move cap.
    """
    states, num_games = track.states, track.states.shape[0]
    terminal = game.is_terminal(states)
    winners = np.where(terminal, states[:, game.num_cells + F_WINNER], 0)
    # A resigned game's position is the one the resigner was to move in: the other player wins.
    winners = np.where(track.resigned, -states[:, game.num_cells + F_PLAYER], winners)
    columns = {name: np.concatenate(parts) for name, parts in rows.items()}
    order = np.lexsort((columns["move_number"], columns["game_id"]))
    columns = {name: values[order] for name, values in columns.items()}
    to_move = columns["states"][:, game.num_cells + F_PLAYER].astype(np.float32)
    # z = winner (+1 first player, -1 second, 0 draw) seen from the player to move at that position.
    z = winners[columns["game_id"]].astype(np.float32) * to_move
    recorded = np.bincount(columns["game_id"], minlength=num_games).astype(np.int32)
    ownership = game.ownership(states) if game.has_ownership else None   # [G, H*W] int8, absolute colours
    return SelfPlayRecords(z=z.astype(np.float32), results=winners.astype(np.int8), game_lengths=recorded,
                           ownership=ownership,
                           plies=track.plies.astype(np.int32), resigned=track.resigned.copy(),
                           resign_disabled=track.resign_disabled.copy(),
                           would_resign_ply=track.would_resign_ply.copy(),
                           would_resign_player=track.would_resign_player.copy(), **columns)


class _SerialEvaluator:
    """An Evaluator called under a lock: one forward pass at a time, whichever group asks."""

    def __init__(self, evaluate: Evaluator) -> None:
        self.evaluate = evaluate
        self.lock = threading.Lock()

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """states [M, S] int16 -> (logits [M, A] float32, values [M] float32)."""
        with self.lock:
            return self.evaluate(states)


class _Stopped(Exception):
    """The other game group failed; this one stops at its next move."""


def _play_group(game: Game, evaluate: Evaluator, games: np.ndarray, config: SelfPlayConfig, max_moves: int,
                rng: np.random.Generator, track: _Games, on_finished: Callable[[int], None],
                stop: threading.Event | None = None) -> dict[str, list]:
    """Play the games with ids `games` [K] (their entries of `track` are updated in place).

    One BatchedMCTS whose slot g' holds games[g']; returns the recorded rows (global game ids). on_finished(n)
    is called with the number of games that just finished.
    """
    mcts = BatchedMCTS(game, evaluate, config.search, rng)
    mcts.reserve(games.shape[0])        # what the first search would allocate; fast searches never reallocate
    active = np.ones(games.shape[0], bool)
    rows = _empty_rows(game)
    try:
        while active.any():
            if stop is not None and stop.is_set():
                raise _Stopped()
            _play_move(game, mcts, games, active, config, max_moves, rng, track, rows, on_finished)
    except _Stopped:
        raise
    except BaseException:
        if stop is not None:
            stop.set()  # the other group stops at its next move
        raise
    return rows


def _combine(full: np.ndarray, first: SearchResult, second: SearchResult) -> SearchResult:
    """One SearchResult of K rows: rows where full [K] bool from `first`, the others from `second`."""
    merged = {}
    for f in fields(SearchResult):
        a, b = getattr(first, f.name), getattr(second, f.name)
        out = np.empty((full.shape[0],) + a.shape[1:], a.dtype)
        out[full], out[~full] = a, b
        merged[f.name] = out
    return SearchResult(**merged)


def _search(mcts: BatchedMCTS, config: SelfPlayConfig, states: np.ndarray, slots: np.ndarray,
            rng: np.random.Generator) -> tuple[SearchResult, np.ndarray]:
    """Search states [K, S] in tree slots [K]: (result [K rows], full [K] bool = searched in full, to record).

    Playout caps off (full_search_fraction 1): one full search with root noise. Otherwise each row is full with
    probability full_search_fraction (one rng draw per row), the rest get a fast search without noise.
    """
    if config.full_search_fraction >= 1.0:
        return mcts.search(states, add_noise=True, slots=slots), np.ones(states.shape[0], bool)
    full = rng.random(states.shape[0]) < config.full_search_fraction
    deep = mcts.search(states[full], add_noise=True, slots=slots[full])
    fast = mcts.search(states[~full], add_noise=False, num_simulations=config.fast_search_simulations,
                       slots=slots[~full])
    return _combine(full, deep, fast), full


def _resignations(config: SelfPlayConfig, track: _Games, idx: np.ndarray, result: SearchResult,
                  to_move: np.ndarray) -> np.ndarray:
    """Games idx [K] whose player to move resigns now: [K] bool (all False when resignation is off).

    The rule fires when the root value (side to move) is below resign_threshold or the solver proved the root
    lost. The first ply it fires is noted in every game (would_resign_ply / _player); resign-disabled games play on.
    """
    if config.resign_threshold is None:
        return np.zeros(idx.shape[0], bool)
    fires = (result.root_value < config.resign_threshold) | (result.proven_value == -1)
    first = fires & (track.would_resign_ply[idx] < 0)
    track.would_resign_ply[idx[first]] = track.plies[idx[first]]
    track.would_resign_player[idx[first]] = to_move[first]
    resign = fires & ~track.resign_disabled[idx]
    track.resigned[idx[resign]] = True
    return resign


def _play_move(game: Game, mcts: BatchedMCTS, games: np.ndarray, active: np.ndarray, config: SelfPlayConfig,
               max_moves: int, rng: np.random.Generator, track: _Games, rows: dict[str, list],
               on_finished: Callable[[int], None]) -> None:
    """Search and play one move in every active game of a group (active [K] bool, updated in place).

    A game whose player resigns plays no move and ends; fast (playout-capped) searches are played, not recorded.
    """
    states, plies = track.states, track.plies
    local = np.flatnonzero(active)
    idx = games[local]
    result, full = _search(mcts, config, states[idx], local, rng)
    temperature = np.where(plies[idx] < config.temperature_moves, 1.0, config.temperature_final)
    actions = choose_moves(result, temperature, rng)
    to_move = states[idx, game.num_cells + F_PLAYER]
    resign = _resignations(config, track, idx, result, to_move)
    keep, play = full & ~resign, ~resign
    policy = solved_policy(result) if config.solved_policy_target else result.policy
    _record_rows(rows, idx[keep], states[idx[keep]], result.visits[keep], policy[keep], actions[keep],
                 result.root_value[keep], plies[idx[keep]])
    mcts.advance(actions[play], slots=local[play])
    moved = idx[play]
    states[moved] = game.step(states[moved], actions[play])
    plies[moved] += 1
    finished = resign | game.is_terminal(states[idx]) | (plies[idx] >= max_moves)
    if finished.any():
        active[local[finished]] = False
        on_finished(int(finished.sum()))


def play_selfplay_games(game: Game, evaluate: Evaluator, num_games: int, config: SelfPlayConfig,
                        rng: np.random.Generator,
                        progress: Callable[[int, int], None] | None = None) -> SelfPlayRecords:
    """Play `num_games` self-play games concurrently and return every recorded position.

    evaluate: see `Evaluator` (one call per search step for all unfinished games of a group; with
    config.overlap, two groups call it in turn from two threads, never at the same time). progress(games_done,
    num_games) is called whenever games finish. Returns SelfPlayRecords (T rows, G = num_games games).
    """
    if num_games < 1:
        raise SearchError(f"num_games must be >= 1 (got {num_games})")
    max_moves = config.max_moves if config.max_moves is not None else game_length_bound(game)
    if max_moves < 1:
        raise SearchError(f"max_moves must be >= 1 or None (got {config.max_moves})")
    track = _new_games(game, num_games, config, rng)
    done_lock = threading.Lock()
    done = [0]

    def on_finished(count: int) -> None:
        with done_lock:
            done[0] += count
            if progress is not None:
                progress(done[0], num_games)

    all_games = np.arange(num_games)
    if not config.overlap or num_games < 2:
        parts = [_play_group(game, evaluate, all_games, config, max_moves, rng, track, on_finished)]
    else:
        parts = _play_overlapped(game, _SerialEvaluator(evaluate), all_games, config, max_moves, rng, track,
                                 on_finished)
    rows = {name: [chunk for part in parts for chunk in part[name]] for name in parts[0]}
    return _finish_records(game, rows, track)


def _play_overlapped(game: Game, evaluate: Evaluator, games: np.ndarray, config: SelfPlayConfig, max_moves: int,
                     rng: np.random.Generator, track: _Games,
                     on_finished: Callable[[int], None]) -> list[dict[str, list]]:
    """Two groups (even, odd game ids) played by this thread and one helper thread; see the module docstring.

    A failure in either group stops the other at its next move and is raised here; the helper thread is
    always joined before returning.
    """
    group_rngs = rng.spawn(2)
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="selfplay-overlap") as pool:
        other = pool.submit(_play_group, game, evaluate, games[1::2], config, max_moves, group_rngs[1], track,
                            on_finished, stop)
        try:
            mine = _play_group(game, evaluate, games[0::2], config, max_moves, group_rngs[0], track,
                               on_finished, stop)
        except _Stopped:
            other.result()  # the helper failed first: raise its error
            raise
        theirs = other.result()
    return [mine, theirs]
