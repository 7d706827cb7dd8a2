"""Fixed, seeded opening sets for matches: a few random plies that do not end the game.

Per game family (`opening_plan`): tic-tac-toe 1 or 2 plies, Connect Four 2, Gomoku 2-4 plies on cells near the
centre (the central square of lines within r of the middle, r = 2 on boards of 9+ lines, else 1: 2r+1 lines
wide, 2r+2 on an even board where both middle lines count), Othello 4, any other game 2.

Rule: openings are distinct POSITIONS (two move orders reaching the same position count once). When the space
of openings is small (at most ENUMERATION_LIMIT move sequences per ply), all of them are enumerated,
de-duplicated, put in a seeded random order, and the first `count` are returned. Larger spaces are sampled
(uniform length, then uniformly random allowed moves) until `count` distinct positions are found or the
attempts run out. Whenever fewer distinct openings exist (or were found) than `count`, the list repeats
cyclically: opening i = distinct[i % len(distinct)].

Tic-tac-toe keeps only openings whose game-theoretic value is a draw (solved exactly): a random 2-ply
opening can be a forced win for one side, and then even perfect play loses one game of the pair, which
would make "never loses to minimax" meaningless as a strength test.
"""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.search.errors import ArenaError

ENUMERATION_LIMIT = 5000


def opening_plan(game: Game) -> tuple[tuple[int, ...], np.ndarray]:
    """(allowed opening lengths, allowed actions [A] bool) for the game's family."""
    allowed = np.ones(game.num_actions, bool)
    family = game.name.split("-")[0]
    if family == "tictactoe":
        return (1, 2), allowed
    if family == "connect4":
        return (2,), allowed
    if family == "othello":
        return (4,), allowed
    if family == "gomoku":
        radius = 2 if min(game.height, game.width) >= 9 else 1
        rows = _central_lines(game.height, radius)
        cols = _central_lines(game.width, radius)
        allowed[:] = False
        allowed[(rows[:, None] * game.width + cols[None, :]).ravel()] = True
        return (2, 3, 4), allowed
    return (2,), allowed


def _central_lines(size: int, radius: int) -> np.ndarray:
    low, high = (size - 1) // 2 - radius, size // 2 + radius
    return np.arange(max(low, 0), min(high, size - 1) + 1)


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


def _drawn_only(game: Game, openings: list[list[int]]) -> list[list[int]]:
    """The openings whose exact minimax value is a draw (tic-tac-toe only)."""
    from shared.search.minimax import board_keys, solve_values

    values = solve_values(game)
    return [moves for moves in openings if values[board_keys(game, game.play_moves(moves))[0]] == 0]


def opening_set(game: Game, count: int, seed: int) -> list[list[int]]:
    """`count` openings (action lists) for `game`, deterministic for a seed; see the module docstring's rule."""
    if count < 1:
        raise ArenaError(f"opening count must be >= 1 (got {count})")
    rng = np.random.default_rng(seed)
    lengths, allowed = opening_plan(game)
    distinct = _enumerate(game, lengths, allowed)
    if distinct is not None:
        distinct = [distinct[i] for i in rng.permutation(len(distinct))]
    else:
        distinct = _sample(game, lengths, allowed, count, rng)
    if game.name == "tictactoe":
        distinct = _drawn_only(game, distinct)
    if not distinct:
        raise ArenaError(f"{game.name}: no non-terminal opening of {lengths} plies exists")
    return [list(distinct[i % len(distinct)]) for i in range(count)]
