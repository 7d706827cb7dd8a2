"""The self-play shard file format (HDF5), version 1: every dataset name, dtype, shape and attribute.

One shard = the games of one self-play job, written once, never modified. Rows are positions in the
order they were played, grouped by game (all moves of game 0, then game 1, ...).

Datasets (T = positions, G = games, S = game.state_size, A = game.num_actions):

    states  [T, S] int16    compact position BEFORE the move (shared/games/base.py layout); the
                            trainer rebuilds input planes with game.encode(states)
    pi      [T, A] float32  normalised root visit distribution (the policy target), rows sum to 1
    z       [T]    float32  final game result from the point of view of the side to move at that row
    moves   [T]    compound MOVES_DTYPE  (game_id int32, move_number int16, action int16,
                            root_value float32 [side to move], visit_count int32)
    games   [G]    compound GAMES_DTYPE  (game_id int32, length int32 = the game's rows, winner int8:
                            +1 first player, -1 second player, 0 draw)
    game_info [G]  compound GAME_INFO_DTYPE, version 2 only (plies int32 = moves played, >= length;
                            resigned int8 0/1; resign_disabled int8 0/1; would_resign_ply int32, the first
                            ply the resign rule fired, -1 never; would_resign_player int8, who was to move
                            then, +1/-1, 0 never). Version 1 shards have no game_info: the reader fills in
                            plies = length and no resignation.
    ownership [G, C] int8   optional, in version 2 shards of games with territory (Game.has_ownership: Go):
                            who owns each of the C = H*W cells in the game's last position, +1 first
                            player, -1 second, 0 no one (absolute colours). In a resigned game that position
                            is the one resigned in, not a counted end; the trainer skips those games.

Version 2 (game_info) also lets a game's rows skip plies: with playout caps (shared/search/selfplay.py) only
full searches are recorded, so move_number (the true ply) increases within a game but may have gaps, and
length <= plies (0 rows is possible). Without gaps every ply 0..length-1 has its row, as in version 1.
Optional attributes of version 2 (resignation counts over the shard, shared/shards/gameinfo.py):
resigned_games, no_resign_games, would_resign_games, false_resignations.

Why float32 for pi: float16 would round visit fractions (error up to ~2e-4, so rows no longer sum
to exactly the stored visit shares), and it saves little after compression (gomoku-15, 7238 positions, gzip-4:
pi 344 KiB as float32 vs 291 KiB as float16). Exactness wins.

Why gzip level 4 without shuffle (measured with tests/storage/bench_compression.py, MCTS-like pi):
    connect4, 5546 positions:  lzf 259 KiB 14 ms write | gzip-1 156 KiB 11 ms | gzip-4 137 KiB 14 ms
    gomoku-15, 7238 positions: lzf 1654 KiB 35 ms      | gzip-1 842 KiB 42 ms | gzip-4 611 KiB 57 ms
(shuffle made every variant bigger: the int16 boards and sparse pi compress better unshuffled).
gzip-4 files are 2-3x smaller than lzf; the extra write time (tens of ms per shard) is nothing next to
the minutes of self-play behind a shard, and reads (what the trainer waits for) are as fast as lzf's.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

FORMAT_VERSION = 2
SUPPORTED_FORMAT_VERSIONS = (1, 2)

SHARD_SUFFIX = ".h5"
TEMP_SUFFIX = ".h5.tmp"

STATES = "states"
PI = "pi"
Z = "z"
MOVES = "moves"
GAMES = "games"
GAME_INFO = "game_info"

STATES_DTYPE = np.dtype("<i2")
PI_DTYPE = np.dtype("<f4")
Z_DTYPE = np.dtype("<f4")
MOVES_DTYPE = np.dtype(
    [
        ("game_id", "<i4"),
        ("move_number", "<i2"),
        ("action", "<i2"),
        ("root_value", "<f4"),
        ("visit_count", "<i4"),
    ]
)
GAMES_DTYPE = np.dtype([("game_id", "<i4"), ("length", "<i4"), ("winner", "i1")])
GAME_INFO_DTYPE = np.dtype(
    [
        ("plies", "<i4"),
        ("resigned", "i1"),
        ("resign_disabled", "i1"),
        ("would_resign_ply", "<i4"),
        ("would_resign_player", "i1"),
    ]
)

DATASET_DTYPES: dict[str, np.dtype] = {
    STATES: STATES_DTYPE,
    PI: PI_DTYPE,
    Z: Z_DTYPE,
    MOVES: MOVES_DTYPE,
    GAMES: GAMES_DTYPE,
}

#: Datasets of version 2 that version 1 shards lack (one row per game).
VERSION2_DATASET_DTYPES: dict[str, np.dtype] = {GAME_INFO: GAME_INFO_DTYPE}

OWNERSHIP = "ownership"
OWNERSHIP_DTYPE = np.dtype("i1")
#: Datasets a shard may hold or lack (one row per game); readers that do not know one ignore it.
OPTIONAL_DATASET_DTYPES: dict[str, np.dtype] = {OWNERSHIP: OWNERSHIP_DTYPE}

#: Compression for every dataset (h5py filter name, its option, and the byte-shuffle filter).
COMPRESSION = "gzip"
COMPRESSION_OPTS = 4
SHUFFLE = False
#: HDF5 per-chunk checksums: bit rot or a torn copy is detected on read (and the shard quarantined).
FLETCHER32 = True
#: Aim for chunks of about this many uncompressed bytes (whole shards are read at once, so big is fine).
CHUNK_TARGET_BYTES = 256 * 1024

#: Attributes the writer fills in itself.
WRITER_ATTRS = ("format_version", "game", "game_name", "job_id", "num_games", "num_positions")
#: Attributes the caller passes to write_shard, with their types; "created" and "worker_host" have defaults.
CALLER_ATTR_TYPES: dict[str, type | tuple[type, ...]] = {
    "generation": int,
    "model_version": str,     # registry version that played ("" when a random/untrained evaluator played)
    "seed": int,
    "simulations": int,
    "worker_host": str,       # default: socket.gethostname()
    "created": str,           # ISO-8601 UTC; default: now
}
REQUIRED_CALLER_ATTRS = ("generation", "model_version", "seed", "simulations")
ALL_ATTRS = WRITER_ATTRS + tuple(CALLER_ATTR_TYPES)
#: Integer attributes the writer adds in version 2 (counts from game_info); version 1 shards lack them.
RESIGN_COUNT_ATTRS = ("resigned_games", "no_resign_games", "would_resign_games", "false_resignations")

#: Tolerance for "each pi row sums to 1".
PI_SUM_TOLERANCE = 1e-3


class ShardError(ValueError):
    """A shard that cannot be written or read; the message names the file (or input) and the problem."""


def game_params_json(game) -> str:
    """The `game` attribute: JSON of game.params() with sorted keys (so equal games give equal text)."""
    return json.dumps(game.params(), sort_keys=True)


def parse_game_params(text: str) -> dict[str, Any]:
    """Inverse of game_params_json; ShardError when the text is not a JSON object with a "name"."""
    try:
        params = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ShardError(f"attr 'game' is not valid JSON: {exc}") from None
    if not isinstance(params, dict) or "name" not in params:
        raise ShardError(f"attr 'game' must be a JSON object with a 'name', got {text!r}")
    return params


def chunk_rows(row_bytes: int, num_rows: int) -> int:
    """Rows per chunk for a dataset of `num_rows` rows of `row_bytes` bytes: ~CHUNK_TARGET_BYTES, at least 1, at most num_rows."""
    return max(1, min(num_rows, CHUNK_TARGET_BYTES // max(1, row_bytes)))


def shard_file_name(job_id: str) -> str:
    """`<job_id>.h5` (job_id already validated)."""
    return f"{job_id}{SHARD_SUFFIX}"


def is_shard_file_name(name: str) -> bool:
    """True for finished shard names (`*.h5`), False for temp files (`.*.h5.tmp`) and hidden files."""
    return name.endswith(SHARD_SUFFIX) and not name.startswith(".")
