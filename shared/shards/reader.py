"""Reading shards: `read_shard` (whole file, validated) and `list_shards` / `scan_shards` (attributes only).

Every h5py or OS failure becomes a ShardError that names the file and the problem.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from shared.shards import schema
from shared.shards.gameinfo import default_game_info
from shared.shards.schema import ShardError
from shared.shards.validate import RecordArrays, check_arrays

log = logging.getLogger(__name__)

_INT_ATTRS = ("format_version", "num_games", "num_positions", "generation", "seed", "simulations",
              *schema.RESIGN_COUNT_ATTRS)
_READ_ERRORS = (OSError, KeyError, ValueError, TypeError, RuntimeError)  # what h5py raises for damaged files


@dataclass
class Shard:
    """One shard in memory: states [T,S] int16, pi [T,A] float32, z [T] float32,
    moves [T] schema.MOVES_DTYPE, games [G] schema.GAMES_DTYPE, game_info [G] schema.GAME_INFO_DTYPE (filled in
    for version 1 shards: plies = length, no resignation), ownership [G, H*W] int8 or None (only games with
    territory record it; schema.py); attrs as plain Python values."""

    path: Path
    attrs: dict[str, Any]
    states: np.ndarray
    pi: np.ndarray
    z: np.ndarray
    moves: np.ndarray
    games: np.ndarray
    game_info: np.ndarray
    ownership: np.ndarray | None = None

    @property
    def num_positions(self) -> int:
        return int(self.states.shape[0])

    @property
    def num_games(self) -> int:
        return int(self.games.shape[0])

    @property
    def game_results(self) -> np.ndarray:
        """[G] int8 winner per game: +1 first player, -1 second player, 0 draw."""
        return self.games["winner"]

    @property
    def generation(self) -> int:
        return int(self.attrs["generation"])

    @property
    def game_params(self) -> dict[str, Any]:
        """The stored game.params() (use shared.games.make_game_from_params to rebuild the game)."""
        return schema.parse_game_params(self.attrs["game"])

    def game_rows(self, game_index: int) -> slice:
        """Row slice of game `game_index` (0-based); ShardError when out of range."""
        if not 0 <= game_index < self.num_games:
            raise ShardError(f"{self.path}: game {game_index} does not exist; this shard has games 0..{self.num_games - 1}")
        lengths = self.games["length"].astype(np.int64)
        start = int(lengths[:game_index].sum())
        return slice(start, start + int(lengths[game_index]))

    def game_actions(self, game_index: int) -> list[int]:
        """The actions played in game `game_index`, in order."""
        return [int(a) for a in self.moves["action"][self.game_rows(game_index)]]


@dataclass(frozen=True)
class ShardInfo:
    """A shard's summary from its attributes (no datasets read)."""

    path: Path
    job_id: str
    generation: int
    num_games: int
    num_positions: int
    model_version: str
    created: str
    size_bytes: int
    game_name: str = ""


@dataclass
class DamagedShard:
    """A file with a shard name that could not be read; `problem` says why."""

    path: Path
    problem: str


@dataclass
class ShardScan:
    """Result of scan_shards: readable shards sorted oldest first, and damaged files."""

    infos: list[ShardInfo] = field(default_factory=list)
    damaged: list[DamagedShard] = field(default_factory=list)


def _read_attrs(h5: h5py.File, path: Path) -> dict[str, Any]:
    missing = [name for name in schema.ALL_ATTRS if name not in h5.attrs]
    if missing:
        raise ShardError(f"{path}: missing attributes {missing} (not a zeroforge shard, or written by a broken writer)")
    attrs: dict[str, Any] = {}
    optional = [name for name in schema.RESIGN_COUNT_ATTRS if name in h5.attrs]   # version 2 only
    for name in (*schema.ALL_ATTRS, *optional):
        value = h5.attrs[name]
        if name in _INT_ATTRS:
            if not np.issubdtype(np.asarray(value).dtype, np.integer):
                raise ShardError(f"{path}: attribute {name!r} must be an integer, found {value!r}")
            attrs[name] = int(value)
        else:
            attrs[name] = value.decode() if isinstance(value, bytes) else str(value)
    if attrs["format_version"] not in schema.SUPPORTED_FORMAT_VERSIONS:
        raise ShardError(
            f"{path}: format_version {attrs['format_version']} is not supported (this code reads "
            f"{list(schema.SUPPORTED_FORMAT_VERSIONS)}); upgrade zeroforge or regenerate the shard"
        )
    return attrs


def _read_dataset(h5: h5py.File, name: str, path: Path, rows: int) -> np.ndarray:
    """Read one dataset after checking its dtype and row count (before allocating memory for it)."""
    if name not in h5:
        raise ShardError(f"{path}: dataset {name!r} is missing")
    dataset = h5[name]
    expected = {**schema.DATASET_DTYPES, **schema.VERSION2_DATASET_DTYPES, **schema.OPTIONAL_DATASET_DTYPES}[name]
    if dataset.dtype != expected:
        raise ShardError(f"{path}: dataset {name!r} has dtype {dataset.dtype}, expected {expected}")
    if len(dataset.shape) < 1 or dataset.shape[0] != rows:
        raise ShardError(f"{path}: dataset {name!r} has shape {dataset.shape}, expected {rows} rows from the attributes")
    return dataset[()]


def _check_shapes(arrays: RecordArrays, attrs: dict[str, Any], path: Path) -> None:
    t, g = attrs["num_positions"], attrs["num_games"]
    actual = {"states": arrays.states.shape, "pi": arrays.pi.shape, "z": arrays.z.shape,
              "moves": arrays.moves.shape, "games": arrays.games.shape}
    if (len(actual["states"]) != 2 or len(actual["pi"]) != 2 or actual["states"][0] != t or actual["pi"][0] != t
            or actual["z"] != (t,) or actual["moves"] != (t,) or actual["games"] != (g,) or t < 1 or g < 1):
        raise ShardError(f"{path}: dataset shapes {actual} do not match num_positions={t}, num_games={g}")


def _check_game(attrs: dict[str, Any], arrays: RecordArrays, game, path: Path) -> None:
    try:
        stored = schema.parse_game_params(attrs["game"])
    except ShardError as exc:
        raise ShardError(f"{path}: {exc}") from None
    if stored.get("name") != attrs["game_name"]:
        raise ShardError(f"{path}: attrs game_name={attrs['game_name']!r} disagrees with game={attrs['game']}")
    if game is None:
        return
    if stored != game.params():
        raise ShardError(f"{path}: shard is for game {stored}, expected {game.params()}; it belongs to another game")
    if arrays.states.shape[1] != game.state_size or arrays.pi.shape[1] != game.num_actions:
        raise ShardError(
            f"{path}: states/pi widths {arrays.states.shape[1]}/{arrays.pi.shape[1]} do not fit {game.name} "
            f"(state size {game.state_size}, {game.num_actions} actions)"
        )


def _num_cells(attrs: dict[str, Any]) -> int | None:
    """H*W from the stored game params (None if they lack a size): where the state fields start."""
    try:
        params = schema.parse_game_params(attrs["game"])
        return int(params["height"]) * int(params["width"])
    except (ShardError, KeyError, TypeError, ValueError):
        return None


def read_shard(path: Path, game=None) -> Shard:
    """Read and validate a whole shard; with `game`, also check it was written for that game.

    ShardError (naming the file) when the file is unreadable, truncated, of an unknown format version,
    lacks a dataset or attribute, has wrong shapes/dtypes, fails a content check, or is for another game.
    """
    path = Path(path)
    try:
        with h5py.File(path, "r") as h5:
            attrs = _read_attrs(h5, path)
            rows = {name: attrs["num_positions"] for name in schema.DATASET_DTYPES}
            rows[schema.GAMES] = rows[schema.GAME_INFO] = attrs["num_games"]
            columns = [_read_dataset(h5, name, path, rows[name]) for name in schema.DATASET_DTYPES]
            if attrs["format_version"] >= 2:
                info = _read_dataset(h5, schema.GAME_INFO, path, rows[schema.GAME_INFO])
            else:  # version 1: every ply recorded, no resignation
                info = default_game_info(columns[-1]["length"])
            owner = (_read_dataset(h5, schema.OWNERSHIP, path, attrs["num_games"]) if schema.OWNERSHIP in h5
                     else None)
            arrays = RecordArrays(*columns, game_info=info, ownership=owner)
    except ShardError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure inside h5py on a damaged file means "damaged shard"
        raise ShardError(f"{path}: cannot read shard ({type(exc).__name__}: {exc})") from exc
    _check_shapes(arrays, attrs, path)
    _check_game(attrs, arrays, game, path)
    check_arrays(arrays, str(path), _num_cells(attrs))
    return Shard(path, attrs, arrays.states, arrays.pi, arrays.z, arrays.moves, arrays.games, arrays.game_info,
                 arrays.ownership)


def read_shard_info(path: Path) -> ShardInfo:
    """A shard's summary from its attributes only (fast); ShardError when the file cannot be read."""
    path = Path(path)
    try:
        with h5py.File(path, "r") as h5:
            attrs = _read_attrs(h5, path)
        size = path.stat().st_size
    except ShardError:
        raise
    except _READ_ERRORS as exc:
        raise ShardError(f"{path}: cannot read shard ({type(exc).__name__}: {exc})") from exc
    return ShardInfo(
        path=path, job_id=attrs["job_id"], generation=attrs["generation"], num_games=attrs["num_games"],
        num_positions=attrs["num_positions"], model_version=attrs["model_version"], created=attrs["created"],
        size_bytes=size, game_name=attrs["game_name"],
    )


def _shard_paths(directory: Path, recursive: bool) -> list[Path]:
    pattern = f"*{schema.SHARD_SUFFIX}"
    found = directory.rglob(pattern) if recursive else directory.glob(pattern)
    return sorted(p for p in found if schema.is_shard_file_name(p.name) and p.is_file())


def scan_shards(directory: Path, recursive: bool = True) -> ShardScan:
    """Summaries of every `*.h5` shard under `directory` (temp files ignored), oldest first
    (by generation, created, job id), plus the files that could not be read."""
    directory = Path(directory)
    scan = ShardScan()
    if not directory.is_dir():
        return scan
    for path in _shard_paths(directory, recursive):
        try:
            scan.infos.append(read_shard_info(path))
        except ShardError as exc:
            scan.damaged.append(DamagedShard(path, str(exc)))
    scan.infos.sort(key=lambda info: (info.generation, info.created, info.job_id))
    return scan


def list_shards(directory: Path, recursive: bool = True) -> list[ShardInfo]:
    """Readable shards under `directory`, oldest first (generation, created, job id); damaged files are
    skipped with one warning each (scan_shards reports them; load_replay_window quarantines them)."""
    scan = scan_shards(directory, recursive)
    for bad in scan.damaged:
        log.warning("skipping unreadable shard %s: %s", bad.path, bad.problem)
    return scan.infos
