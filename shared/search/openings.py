"""Fixed, seeded opening sets for matches: a few random plies that do not end the game.

The game family says how long openings are and which moves they may use (`GameFamily.opening_plan`, e.g. a few
plies near the centre of a Gomoku board); without a plan, 2 plies of any move. A caller may instead ask for
`plies`: openings of those lengths made of any legal moves (the gate's `gate.opening_plies`, for boards whose
family openings good players draw).

Rule: openings are distinct POSITIONS (two move orders reaching the same position count once). When the space
of openings is small (at most ENUMERATION_LIMIT move sequences per ply), all of them are enumerated,
de-duplicated, put in a seeded random order, and the first `count` are returned. Larger spaces are sampled
(uniform length, then uniformly random allowed moves) until `count` distinct positions are found or the
attempts run out. Whenever fewer distinct openings exist (or were found) than `count`, the list repeats
cyclically: opening i = distinct[i % len(distinct)].

A family may then keep only the openings worth playing (`GameFamily.opening_filter`; e.g. tic-tac-toe keeps
only openings whose solved value is a draw, so that perfect play never loses a game of a pair).

Self-play openings (`random_opening_states`) are another thing: one fresh random opening per game, batched, for
self-play games that start away from the lines their search keeps playing (`selfplay.random_opening_plies`).
"""
from __future__ import annotations

import numpy as np

from shared.games import family_of
from shared.games.base import Game
from shared.search.errors import ArenaError

ENUMERATION_LIMIT = 5000


def opening_plan(game: Game, plies: tuple[int, ...] | None = None) -> tuple[tuple[int, ...], np.ndarray]:
    """(allowed opening lengths, allowed actions [A] bool): `plies` of any move when given, else the game
    family's plan, else 2 plies of any move."""
    if plies is not None:
        if not plies or min(plies) < 1:
            raise ArenaError(f"opening lengths must be 1 or more plies (got {list(plies)})")
        return tuple(sorted(set(plies))), np.ones(game.num_actions, bool)
    plan = family_of(game).opening_plan
    if plan is not None:
        return plan(game)
    return (2,), np.ones(game.num_actions, bool)


def _position_key(game: Game, state: np.ndarray) -> bytes:
    """Board cells and side to move: two move orders reaching the same position share the key."""
    return state[: game.num_cells + 1].tobytes()


def _enumerate(game: Game, lengths: tuple[int, ...], allowed: np.ndarray) -> list[list[int]] | None:
    """All non-terminal openings of the given lengths, one per distinct position; None when too many."""
    sequences = np.zeros((1, 0), np.int64)
    states = game.initial_states(1)
    found: dict[bytes, list[int]] = {}
    for ply in range(1, max(lengths) + 1):
        rows, actions = np.nonzero(game.legal_mask(states) & allowed)
        if rows.size > ENUMERATION_LIMIT:
            return None
        sequences = np.concatenate([sequences[rows], actions[:, None]], axis=1)
        states = game.step(states[rows], actions)
        live = ~game.is_terminal(states)
        sequences, states = sequences[live], states[live]
        if ply in lengths:
            for seq, state in zip(sequences.tolist(), states):
                found.setdefault(_position_key(game, state), seq)
    return list(found.values())


def _random_opening(game: Game, length: int, allowed: np.ndarray, rng: np.random.Generator) -> list[int] | None:
    """`length` uniformly random allowed legal moves from the start; None if the game ends or gets stuck."""
    state, moves = game.initial_states(1), []
    for _ in range(length):
        choices = np.flatnonzero(game.legal_mask(state)[0] & allowed)
        if choices.size == 0:
            return None
        moves.append(int(rng.choice(choices)))
        state = game.step(state, np.array([moves[-1]]))
    return None if game.is_terminal(state)[0] else moves


def _sample(game: Game, lengths: tuple[int, ...], allowed: np.ndarray, count: int,
            rng: np.random.Generator) -> list[list[int]]:
    """Random distinct openings until `count` are found or 50 * count + 1000 attempts were made."""
    found: dict[bytes, list[int]] = {}
    for _ in range(50 * count + 1000):
        if len(found) >= count:
            break
        moves = _random_opening(game, int(rng.choice(lengths)), allowed, rng)
        if moves is not None:
            found.setdefault(_position_key(game, game.play_moves(moves)[0]), moves)
    return list(found.values())


def opening_set(game: Game, count: int, seed: int, plies: tuple[int, ...] | None = None) -> list[list[int]]:
    """`count` openings (action lists) for `game`, deterministic for a seed: the family's plan, or openings of
    `plies` moves of any legal move when given; see the module docstring's rule."""
    if count < 1:
        raise ArenaError(f"opening count must be >= 1 (got {count})")
    rng = np.random.default_rng(seed)
    lengths, allowed = opening_plan(game, plies)
    distinct = _enumerate(game, lengths, allowed)
    if distinct is not None:
        distinct = [distinct[i] for i in rng.permutation(len(distinct))]
    else:
        distinct = _sample(game, lengths, allowed, count, rng)
    keep = family_of(game).opening_filter
    if keep is not None:
        distinct = keep(game, distinct)
    if not distinct:
        raise ArenaError(f"{game.name}: no non-terminal opening of {lengths} plies exists")
    return [list(distinct[i % len(distinct)]) for i in range(count)]


def random_opening_states(game: Game, lengths: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Start positions of self-play games, one per entry of lengths [G] int (0 = the initial position): that many
    uniformly random legal moves from the start, all games at once. A game's opening stops early, at the
    position before, where its random move would end the game, so every returned position is live (and a live
    position always has a legal move). Returns (states [G, S] int16, plies [G] int32: the moves each opening
    played)."""
    lengths = np.asarray(lengths, np.int64)
    states = game.initial_states(lengths.shape[0])
    plies = np.zeros(lengths.shape[0], np.int32)
    going = lengths > 0
    while going.any():
        idx = np.flatnonzero(going)
        legal = game.legal_mask(states[idx])                                       # [K, A] bool
        keys = np.where(legal, rng.random(legal.shape), -1.0)                      # a uniform legal move per row
        moved = game.step(states[idx], keys.argmax(axis=1))
        live = ~game.is_terminal(moved)
        states[idx[live]] = moved[live]
        plies[idx[live]] += 1
        going[idx[~live]] = False
        going &= plies < lengths
    return states, plies
