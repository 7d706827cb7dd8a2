"""The trainer's replay window: the newest positions of a game's shards, loaded whole into memory.

Whole shards are read (random row reads from compressed chunks are slow). Shards are taken newest
first (by generation, then job id) until `max_positions` rows are collected; from the oldest
shard taken only its last rows are kept. Damaged or unreadable shards (or shards of another game)
are moved to the quarantine directory with a `.reason.txt` beside them, logged once each and
listed in `bad_shards`; they never stop the load.
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from shared.games.base import F_PLAYER
from shared.shards import schema
from shared.shards.reader import Shard, ShardInfo, read_shard, scan_shards
from shared.shards.schema import ShardError

log = logging.getLogger(__name__)


@dataclass
class ReplayWindow:
    """Training positions, oldest first: states [N,S] int16, pi [N,A] float32, z [N] float32 (side to move),
    generation [N] int32 (generation of the shard each row came from), root_value [N] float32 (the self-play
    search value at the position, side to move, as z).

    cut_value [N] float32: the value targets cut at sampled moves (sampled_move_cut_values), or None unless the
    load asked for them.

    ownership [N, H*W] int8: the owner of each cell at the end of the row's game seen from the side to move at
    the row (+1 the side to move, -1 its opponent, 0 no one), and ownership_known [N] bool: the row's game was
    counted out (not resigned) and its shard recorded ownership. Both None unless the load asked for them and
    a shard of the window recorded ownership (games without territory never do).

    shard_names: shards used, newest first, as paths relative to the shards directory.
    bad_shards: damaged shards found (and quarantined) during this load, same naming."""

    states: np.ndarray
    pi: np.ndarray
    z: np.ndarray
    generation: np.ndarray
    root_value: np.ndarray
    shard_names: list[str] = field(default_factory=list)
    bad_shards: list[str] = field(default_factory=list)
    ownership: np.ndarray | None = None
    ownership_known: np.ndarray | None = None
    cut_value: np.ndarray | None = None

    @property
    def num_positions(self) -> int:
        return int(self.states.shape[0])


def sampled_move_cut_values(shard: Shard, num_cells: int) -> np.ndarray:
    """Value targets that stop at the first sampled move (Watkins' cut): one per row of `shard`, [T] float32, from
    the side to move at the row, like z.

    A move is sampled when the move played is not the row's most visited one (pi's argmax): a temperature move
    that chose another, so the game's result after it no longer says what the position was worth with the
    search's own choices. A row with no sampled move at or after it in its game keeps z; any other row takes the
    self-play search value (root_value) of the first sampled row at or after it, negated when the other side was
    to move there. Rows are grouped by game in move order (shared.shards.schema)."""
    rows = np.arange(shard.num_positions)
    sampled = shard.moves["action"].astype(np.int64) != shard.pi.argmax(axis=1)
    lengths = shard.games["length"].astype(np.int64)
    game_end = np.repeat(np.cumsum(lengths), lengths)                  # [T] one past the last row of the row's game
    # the first sampled row at or after each row: a running minimum from the end; rows of later games are all
    # >= game_end of an earlier row's game, so they never win over that game's own end
    first = np.minimum.accumulate(np.where(sampled, rows, game_end)[::-1])[::-1]
    cut = first < game_end
    source = np.where(cut, first, rows)
    player = shard.states[:, num_cells + F_PLAYER]
    flip = np.where(player[source] == player, 1.0, -1.0)               # the search value is the mover's there
    return np.where(cut, flip * shard.moves["root_value"][source], shard.z).astype(np.float32)


def _relative_name(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.name


def quarantine_shard(path: Path, quarantine_dir: Path, problem: str, name: str | None = None) -> Path | None:
    """Move a damaged shard into `quarantine_dir` (name flattened, '/' -> '__', never overwriting) and write
    `<name>.reason.txt` with `problem`. Returns the new path, or None if the file was already gone or could
    not be moved (then it is only reported)."""
    flat = (name or path.name).replace("/", "__")
    try:
        quarantine_dir.mkdir(parents=True, exist_ok=True)
        target = quarantine_dir / flat
        if target.exists():
            target = quarantine_dir / f"{flat}.{time.strftime('%Y%m%dT%H%M%S')}.{os.getpid()}"
        os.replace(path, target)
        target.with_name(target.name + ".reason.txt").write_text(problem + "\n", encoding="utf-8")
        return target
    except FileNotFoundError:
        return None  # another reader quarantined it first
    except OSError as exc:
        log.error("could not quarantine %s: %s", path, exc)
        return None


def _select_newest(infos: list[ShardInfo], max_generations: int | None,
                   up_to_generation: int | None = None) -> list[ShardInfo]:
    # Within a generation the order is by job id, not creation time, so a window (and the training on it)
    # is the same whichever worker finished first.
    newest_first = sorted((i for i in infos if up_to_generation is None or i.generation <= up_to_generation),
                          key=lambda i: (i.generation, i.job_id), reverse=True)
    if max_generations is None:
        return newest_first
    keep = set(sorted({i.generation for i in newest_first}, reverse=True)[:max_generations])
    return [i for i in newest_first if i.generation in keep]


def _row_ownership(shard: Shard, rows: slice, num_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Ownership targets of a shard's rows: ([R, H*W] int8 from each row's side to move, [R] bool known)."""
    take = rows.stop - rows.start
    if shard.ownership is None:
        return np.zeros((take, num_cells), schema.OWNERSHIP_DTYPE), np.zeros(take, bool)
    game_ids = shard.moves["game_id"][rows]
    to_move = shard.states[rows, num_cells + F_PLAYER].astype(np.int8)                # +1 / -1
    # Sign flip: the stored owners are absolute colours (+1 first player); times the side to move gives its view.
    owner = shard.ownership[game_ids] * to_move[:, None]
    return owner.astype(schema.OWNERSHIP_DTYPE), shard.game_info["resigned"][game_ids] == 0


def _check_limits(max_positions: int, max_generations: int | None) -> None:
    if isinstance(max_positions, bool) or not isinstance(max_positions, int) or max_positions < 1:
        raise ShardError(f"max_positions must be an integer >= 1, got {max_positions!r}")
    if max_generations is not None and (not isinstance(max_generations, int) or max_generations < 1):
        raise ShardError(f"max_generations must be None or an integer >= 1, got {max_generations!r}")


def _empty_window(game, shard_names: list[str], bad: list[str]) -> ReplayWindow:
    return ReplayWindow(
        states=np.zeros((0, game.state_size), schema.STATES_DTYPE),  # [0, S] int16
        pi=np.zeros((0, game.num_actions), schema.PI_DTYPE),  # [0, A] float32
        z=np.zeros((0,), schema.Z_DTYPE),  # [0] float32
        generation=np.zeros((0,), np.int32),  # [0] int32
        root_value=np.zeros((0,), np.float32),  # [0] float32
        shard_names=shard_names,
        bad_shards=bad,
    )


def load_replay_window(
    shards_dir: Path,
    quarantine_dir: Path,
    game,
    max_positions: int,
    max_generations: int | None = None,
    up_to_generation: int | None = None,
    ownership: bool = False,
    cut_values: bool = False,
) -> ReplayWindow:
    """Load up to `max_positions` newest positions of `game` from the shards under `shards_dir` (recursively).

    max_generations: only shards of the newest N generations present. up_to_generation: ignore shards of later
    generations (the trainer of generation G passes G: a later generation's self-play may already be writing
    shards, pipeline.overlap_selfplay). quarantine_dir: where damaged shards go (DataLayout.quarantine_dir in
    the pipeline). ownership: also load the ownership targets (for a network with an ownership head; they take
    H*W bytes per position). cut_values: also compute the value targets cut at sampled moves (ReplayWindow.cut_value,
    train.value_cut_at_sampled_moves).
    Returns a ReplayWindow (possibly empty: N = 0) with rows oldest first.
    """
    _check_limits(max_positions, max_generations)
    shards_dir = Path(shards_dir)
    quarantine_dir = Path(quarantine_dir)
    bad: list[str] = []

    def report_bad(path: Path, problem: str) -> None:
        name = _relative_name(path, shards_dir)
        moved = quarantine_shard(path, quarantine_dir, problem, name)
        log.warning("damaged shard %s quarantined to %s: %s", name, moved or "(not moved)", problem)
        bad.append(name)

    scan = scan_shards(shards_dir, recursive=True)
    for damaged in scan.damaged:
        report_bad(damaged.path, damaged.problem)
    pieces, owners, cuts, names, total = [], [], [], [], 0
    has_ownership = False
    for info in _select_newest(scan.infos, max_generations, up_to_generation):
        if total >= max_positions:
            break
        try:
            shard = read_shard(info.path, game)
        except ShardError as exc:
            report_bad(info.path, str(exc))
            continue
        take = min(shard.num_positions, max_positions - total)
        rows = slice(shard.num_positions - take, shard.num_positions)  # the newest rows of this shard
        pieces.append((shard.states[rows], shard.pi[rows], shard.z[rows], np.full(take, shard.generation, np.int32),
                       shard.moves["root_value"][rows].astype(np.float32)))
        if ownership:
            owners.append(_row_ownership(shard, rows, game.num_cells))
            has_ownership |= shard.ownership is not None
        if cut_values:
            cuts.append(sampled_move_cut_values(shard, game.num_cells)[rows])
        names.append(_relative_name(info.path, shards_dir))
        total += take
    if not pieces:
        return _empty_window(game, names, bad)
    for newest_first in (pieces, owners, cuts):
        newest_first.reverse()  # oldest first
    states, pi, z, generation, root_value = (np.concatenate(column) for column in zip(*pieces))
    ownership, known = (np.concatenate(column) for column in zip(*owners)) if has_ownership else (None, None)
    cut_value = np.concatenate(cuts) if cut_values else None
    return ReplayWindow(states, pi, z, generation, root_value, names, bad, ownership, known, cut_value)


def generation_positions(shards_dir: Path, generation: int) -> int:
    """Positions in the readable shards of `generation` under `shards_dir` (from their attributes; >= 0)."""
    return sum(info.num_positions for info in scan_shards(Path(shards_dir), recursive=True).infos
               if info.generation == generation)
