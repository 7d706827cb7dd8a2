"""Checks shared by the shard writer (records before writing) and reader (arrays after reading).

Content rules (T positions, G games, S state size, A actions):
- shapes: states [T, S], pi [T, A], z/moves [T], games [G], T >= 1, G >= 1
- pi finite, >= 0, each row sums to 1 (within schema.PI_SUM_TOLERANCE)
- z and root_value finite in [-1, 1]; action in [0, A); visit_count >= 0
- rows grouped by game in move order, game ids 0..G-1: game g has `length` rows whose move numbers increase and
  stay below its plies (game_info; plies >= length >= 0), so with plies == length they are exactly
  0..length-1 (version 1 shards, read with plies = length)
- game_info flags 0/1, a game never both resigned and resign-disabled; would_resign_ply in [-1, plies) (equal
  to plies in a resigned game, which ends there) with would_resign_player +1/-1 when it fired, 0 when not;
  plies >= 1 except in a game resigned before its first move
- winner in {-1, 0, +1} and z == winner * player_to_move (the result seen from the side to move)
- ownership, when present: [G, C] with C = H*W, values in {-1, 0, +1}
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shared.games.base import F_PLAYER, NUM_FIELDS
from shared.shards import schema
from shared.shards.gameinfo import game_info_from_records
from shared.shards.schema import ShardError

RECORD_FIELDS = (
    "states", "pi", "z", "game_id", "move_number", "action", "root_value", "visit_count", "results", "game_lengths",
)


@dataclass
class RecordArrays:
    """Shard content in file dtypes: states [T,S] int16, pi [T,A] float32, z [T] float32,
    moves [T] schema.MOVES_DTYPE, games [G] schema.GAMES_DTYPE, game_info [G] schema.GAME_INFO_DTYPE,
    ownership [G, H*W] int8 or None (games without territory)."""

    states: np.ndarray
    pi: np.ndarray
    z: np.ndarray
    moves: np.ndarray
    games: np.ndarray
    game_info: np.ndarray
    ownership: np.ndarray | None = None


def _as_int_array(values: np.ndarray, name: str, dtype: np.dtype) -> np.ndarray:
    """Cast integer data to `dtype`, refusing non-integers and values that do not fit."""
    if values.size and not np.issubdtype(values.dtype, np.integer):
        raise ShardError(f"records.{name} must hold integers, got dtype {values.dtype}")
    info = np.iinfo(dtype)
    if values.size and (values.min() < info.min or values.max() > info.max):
        raise ShardError(f"records.{name} has values outside {dtype} range [{info.min}, {info.max}]")
    return values.astype(dtype)


def _collect(records) -> dict[str, np.ndarray]:
    missing = [name for name in RECORD_FIELDS if not hasattr(records, name)]
    if missing:
        raise ShardError(f"records lack fields {missing}; pass a SelfPlayRecords (shared/search/selfplay.py)")
    return {name: np.asarray(getattr(records, name)) for name in RECORD_FIELDS}


def _check_shapes(game, f: dict[str, np.ndarray]) -> None:
    t = f["states"].shape[0] if f["states"].ndim == 2 else -1
    expected = {
        "states": (t, game.state_size), "pi": (t, game.num_actions), "z": (t,), "game_id": (t,),
        "move_number": (t,), "action": (t,), "root_value": (t,), "visit_count": (t,),
        "results": (f["results"].shape[0] if f["results"].ndim == 1 else -1,),
    }
    expected["game_lengths"] = expected["results"]
    for name, shape in expected.items():
        if f[name].shape != shape or -1 in shape:
            raise ShardError(f"records.{name} has shape {f[name].shape}, expected {shape} for {game.name}")
    if t == 0 or f["results"].shape[0] == 0:
        raise ShardError("records hold no positions or no games; there is nothing to write")


def records_to_arrays(game, records) -> RecordArrays:
    """Convert a SelfPlayRecords-like object to file dtypes, rows sorted by (game_id, move_number)."""
    f = _collect(records)
    _check_shapes(game, f)
    for name in ("pi", "z", "root_value"):
        if not np.issubdtype(f[name].dtype, np.floating) and not np.issubdtype(f[name].dtype, np.integer):
            raise ShardError(f"records.{name} must be numeric, got dtype {f[name].dtype}")
    order = np.lexsort((f["move_number"], f["game_id"]))  # group rows by game, in move order
    moves = np.empty(order.shape[0], dtype=schema.MOVES_DTYPE)
    for name in ("game_id", "move_number", "action", "visit_count"):
        moves[name] = _as_int_array(f[name][order], name, schema.MOVES_DTYPE[name])
    moves["root_value"] = f["root_value"][order].astype(np.float32)
    games = np.empty(f["results"].shape[0], dtype=schema.GAMES_DTYPE)
    games["game_id"] = np.arange(games.shape[0], dtype=np.int32)
    games["length"] = _as_int_array(f["game_lengths"], "game_lengths", schema.GAMES_DTYPE["length"])
    games["winner"] = _as_int_array(f["results"], "results", schema.GAMES_DTYPE["winner"])
    ownership = getattr(records, "ownership", None)
    if ownership is not None:
        ownership = np.asarray(ownership)
        if ownership.shape != (games.shape[0], game.num_cells):
            raise ShardError(f"records.ownership has shape {ownership.shape}, expected "
                             f"({games.shape[0]}, {game.num_cells}): one row per game, one column per cell")
        ownership = _as_int_array(ownership, "ownership", schema.OWNERSHIP_DTYPE)
    return RecordArrays(
        ownership=ownership,
        states=_as_int_array(f["states"][order], "states", schema.STATES_DTYPE),
        pi=f["pi"][order].astype(schema.PI_DTYPE),
        z=f["z"][order].astype(schema.Z_DTYPE),
        moves=moves,
        games=games,
        game_info=game_info_from_records(records, games["length"]),
    )


def _check_finite_range(values: np.ndarray, name: str, low: float, high: float, where: str) -> None:
    if not np.all(np.isfinite(values)):
        raise ShardError(f"{where}: {name} has {int(np.sum(~np.isfinite(values)))} non-finite values")
    if values.size and (values.min() < low or values.max() > high):
        raise ShardError(f"{where}: {name} must lie in [{low}, {high}], found [{values.min()}, {values.max()}]")


def _check_policy(pi: np.ndarray, where: str) -> None:
    _check_finite_range(pi, "pi", 0.0, 1.0 + schema.PI_SUM_TOLERANCE, where)
    sums = pi.sum(axis=1, dtype=np.float64)
    bad = np.flatnonzero(np.abs(sums - 1.0) > schema.PI_SUM_TOLERANCE)
    if bad.size:
        raise ShardError(f"{where}: pi row {int(bad[0])} sums to {sums[bad[0]]:.6f}, expected 1 ({bad.size} bad rows)")


def _check_game_structure(moves: np.ndarray, games: np.ndarray, info: np.ndarray, where: str) -> None:
    num_games = games.shape[0]
    if not np.array_equal(games["game_id"], np.arange(num_games)):
        raise ShardError(f"{where}: games.game_id must be 0..{num_games - 1} in order")
    lengths, plies = games["length"].astype(np.int64), info["plies"].astype(np.int64)
    if info.shape != games.shape:
        raise ShardError(f"{where}: game_info has {info.shape[0]} rows, expected one per game ({num_games})")
    if np.any(lengths < 0) or np.any(lengths > plies) or np.any((plies < 1) & (info["resigned"] == 0)):
        raise ShardError(f"{where}: game lengths must be <= the plies played of each game (>= 1 unless resigned)")
    if int(lengths.sum()) != moves.shape[0]:
        raise ShardError(f"{where}: game lengths sum to {int(lengths.sum())}, expected {moves.shape[0]} positions")
    expected_ids = np.repeat(games["game_id"], lengths)
    if not np.array_equal(moves["game_id"], expected_ids):
        raise ShardError(f"{where}: rows per game do not match the game lengths (or game ids outside 0..{num_games - 1})")
    numbers = moves["move_number"].astype(np.int64)
    starts = np.cumsum(lengths) - lengths
    later = np.ones(moves.shape[0], bool)
    later[starts[lengths > 0]] = False                       # the first row of each game has no predecessor
    rising = np.diff(numbers, prepend=-1) > 0
    if np.any(numbers < 0) or np.any(numbers >= plies[expected_ids]) or np.any(later & ~rising):
        raise ShardError(f"{where}: move numbers of each game must increase and stay below its plies "
                         "(0..length-1 without gaps when every ply is recorded)")
    if not np.all(np.isin(games["winner"], (-1, 0, 1))):
        raise ShardError(f"{where}: game winners must be +1, -1 or 0")
    _check_game_info(info, where)


def _check_game_info(info: np.ndarray, where: str) -> None:
    flags_ok = np.isin(info["resigned"], (0, 1)).all() and np.isin(info["resign_disabled"], (0, 1)).all()
    if not flags_ok or np.any((info["resigned"] == 1) & (info["resign_disabled"] == 1)):
        raise ShardError(f"{where}: game_info resigned / resign_disabled must be 0 or 1, never both 1")
    ply, player, resigned = info["would_resign_ply"], info["would_resign_player"], info["resigned"] == 1
    fired = ply >= 0
    # A resigned game ends at the ply the rule first fired (no move played there): would_resign_ply == plies.
    placed = np.where(resigned, ply == info["plies"], ply < info["plies"])
    if np.any(ply < -1) or not placed.all() or np.any(fired != np.isin(player, (-1, 1))) or np.any(
            ~fired & (player != 0)):
        raise ShardError(f"{where}: game_info would_resign_ply must lie in [-1, plies) (= plies in a resigned "
                         "game), with would_resign_player +1/-1 when it is >= 0 and 0 when it is -1")


def _check_ownership(arrays: RecordArrays, where: str, num_cells: int | None) -> None:
    owner = arrays.ownership
    if owner is None:
        return
    rows = arrays.games.shape[0]
    if owner.ndim != 2 or owner.shape[0] != rows or (num_cells is not None and owner.shape[1] != num_cells):
        raise ShardError(f"{where}: ownership has shape {owner.shape}, expected ({rows}, "
                         f"{num_cells if num_cells is not None else 'H*W'}): one row per game")
    if not np.isin(owner, (-1, 0, 1)).all():
        raise ShardError(f"{where}: ownership values must be +1, -1 or 0")


def check_arrays(arrays: RecordArrays, where: str, num_cells: int | None = None) -> None:
    """Raise ShardError (prefixed with `where`) unless `arrays` satisfy every content rule above.

    num_cells: H*W of the game, locating the player-to-move field at states[:, num_cells + F_PLAYER]; None
    assumes the common layout S = H*W + NUM_FIELDS (games with extra state data, like Go, must pass it).
    """
    num_positions, state_size = arrays.states.shape
    num_actions = arrays.pi.shape[1]
    _check_policy(arrays.pi, where)
    _check_finite_range(arrays.z, "z", -1.0, 1.0, where)
    _check_finite_range(arrays.moves["root_value"], "root_value", -1.0 - 1e-4, 1.0 + 1e-4, where)
    actions = arrays.moves["action"]
    if actions.min() < 0 or actions.max() >= num_actions:
        raise ShardError(f"{where}: actions must lie in [0, {num_actions}), found [{actions.min()}, {actions.max()}]")
    if arrays.moves["visit_count"].min() < 0:
        raise ShardError(f"{where}: visit counts must be >= 0")
    _check_game_structure(arrays.moves, arrays.games, arrays.game_info, where)
    _check_ownership(arrays, where, num_cells)
    fields_at = state_size - NUM_FIELDS if num_cells is None else num_cells
    if fields_at < 0 or fields_at + NUM_FIELDS > state_size:
        raise ShardError(f"{where}: states of width {state_size} cannot hold a {num_cells}-cell board and its fields")
    to_move = arrays.states[:, fields_at + F_PLAYER].astype(np.float32)
    if not np.all(np.isin(to_move, (-1.0, 1.0))):
        raise ShardError(f"{where}: the player-to-move field of states must be +1 or -1")
    # z is the result from the side to move: winner (+1 first / -1 second / 0) times player to move (+1 / -1).
    expected_z = arrays.games["winner"][arrays.moves["game_id"]].astype(np.float32) * to_move
    bad = np.flatnonzero(arrays.z != expected_z)
    if bad.size:
        raise ShardError(
            f"{where}: z[{int(bad[0])}] = {arrays.z[bad[0]]} but the game's winner seen from the side to move "
            f"is {expected_z[bad[0]]} ({bad.size} rows disagree); z must be winner * player_to_move"
        )


def validate_records(game, records) -> RecordArrays:
    """Convert and check self-play records for `game` before writing; ShardError naming the first problem."""
    arrays = records_to_arrays(game, records)
    check_arrays(arrays, "records", game.num_cells)
    return arrays
