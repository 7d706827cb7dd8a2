"""Where zeroforge keeps its files: the one place that builds data paths.

Layout under a data root (default `./zeroforge-data`, or env ZEROFORGE_DATA_DIR):

    <root>/games/<game>/shards/gen-000003/<job_id>.h5   self-play shards, one folder per generation
    <root>/games/<game>/quarantine/                     damaged shards moved out of the way
    <root>/games/<game>/models/                         the model registry (versions/, best.json, history.jsonl)
    <root>/games/<game>/checkpoints/                    trainer checkpoints
    <root>/games/<game>/reports/                        gate reports, plots

Every other module asks `DataLayout` for these paths instead of joining strings itself.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

DATA_DIR_ENV = "ZEROFORGE_DATA_DIR"
DEFAULT_DATA_DIR_NAME = "zeroforge-data"

_GAMES_DIR = "games"
_GENERATION_PREFIX = "gen-"
_SAFE_GAME_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_GENERATION_DIR = re.compile(r"^gen-(\d{6,})$")


class LayoutError(ValueError):
    """A data root or game name that cannot be used; the message says what is wrong and how to fix it."""


def default_data_root() -> Path:
    """The data root: env ZEROFORGE_DATA_DIR when set (and non-empty), else ./zeroforge-data in the current directory."""
    from_env = os.environ.get(DATA_DIR_ENV, "").strip()
    return Path(from_env) if from_env else Path.cwd() / DEFAULT_DATA_DIR_NAME


def check_game_name(game_name: str) -> str:
    """Return `game_name` if it is safe as one path component (lowercase letters, digits, '.', '_', '-'), else LayoutError."""
    if not isinstance(game_name, str) or not _SAFE_GAME_NAME.match(game_name) or game_name in (".", ".."):
        raise LayoutError(
            f"game name {game_name!r} cannot be used as a directory name; use a game name such as "
            "'connect4' or 'gomoku-8x8-5' (lowercase letters, digits, '.', '_', '-')"
        )
    return game_name


@dataclass(frozen=True)
class DataLayout:
    """Paths for one game under one data root. Only builds paths; `ensure()` creates the directories."""

    root: Path
    game_name: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))
        check_game_name(self.game_name)

    @classmethod
    def from_shards_dir(cls, shards_dir: Path) -> DataLayout:
        """The layout whose `shards_dir` is `shards_dir` (root/games/<game>/shards); LayoutError for any other path."""
        shards_dir = Path(shards_dir)
        game_dir = shards_dir.parent
        if shards_dir.name != "shards" or game_dir.parent.name != _GAMES_DIR:
            raise LayoutError(
                f"{shards_dir} is not a shards directory of the data layout (<root>/games/<game>/shards); "
                "pass the quarantine directory explicitly or use DataLayout(root, game).shards_dir"
            )
        return cls(game_dir.parent.parent, game_dir.name)

    @property
    def game_dir(self) -> Path:
        """<root>/games/<game>: everything that belongs to one game."""
        return self.root / _GAMES_DIR / self.game_name

    @property
    def shards_dir(self) -> Path:
        """<root>/games/<game>/shards: holds one gen-NNNNNN folder per generation."""
        return self.game_dir / "shards"

    def generation_shards_dir(self, generation: int) -> Path:
        """<root>/games/<game>/shards/gen-000003 for generation 3 (generation >= 0)."""
        if isinstance(generation, bool) or not isinstance(generation, int) or generation < 0:
            raise LayoutError(f"generation must be an integer >= 0, got {generation!r}")
        return self.shards_dir / f"{_GENERATION_PREFIX}{generation:06d}"

    @property
    def quarantine_dir(self) -> Path:
        """<root>/games/<game>/quarantine: damaged shards are moved here (with a .reason.txt beside each)."""
        return self.game_dir / "quarantine"

    @property
    def registry_dir(self) -> Path:
        """<root>/games/<game>/models: the model registry directory."""
        return self.game_dir / "models"

    @property
    def checkpoints_dir(self) -> Path:
        """<root>/games/<game>/checkpoints: trainer checkpoints."""
        return self.game_dir / "checkpoints"

    @property
    def reports_dir(self) -> Path:
        """<root>/games/<game>/reports: gate reports and plots."""
        return self.game_dir / "reports"

    def ensure(self) -> DataLayout:
        """Create the game's directories (shards, quarantine, models, checkpoints, reports); returns self."""
        for path in (self.shards_dir, self.quarantine_dir, self.registry_dir, self.checkpoints_dir, self.reports_dir):
            path.mkdir(parents=True, exist_ok=True)
        return self


def generation_of_dir(path: Path) -> int | None:
    """The generation number of a gen-NNNNNN folder name, or None when `path` is not one."""
    match = _GENERATION_DIR.match(Path(path).name)
    return int(match.group(1)) if match else None


def games_in_data_root(root: Path) -> list[str]:
    """Sorted names of the games that have a directory under <root>/games (empty when there are none)."""
    games_dir = Path(root) / _GAMES_DIR
    if not games_dir.is_dir():
        return []
    return sorted(p.name for p in games_dir.iterdir() if p.is_dir() and _SAFE_GAME_NAME.match(p.name))


def resolve_game_name(root: Path, game_name: str | None, must_exist: bool = False) -> str:
    """The game to work on: `game_name` when given, else the only game present under `root`.

    LayoutError when none is given and the data root holds no game or several (the message lists them),
    and, with must_exist=True, when the given game has no directory under `root`.
    """
    games = games_in_data_root(root)
    if game_name:
        check_game_name(game_name)
        if must_exist and game_name not in games:
            present = ", ".join(games) if games else "none"
            raise LayoutError(f"no data for game {game_name!r} under {Path(root)} (games present: {present}); check --game and --data-dir")
        return game_name
    if len(games) == 1:
        return games[0]
    if not games:
        raise LayoutError(f"no game data under {Path(root) / _GAMES_DIR}; pass --data-dir DIR (or set {DATA_DIR_ENV})")
    raise LayoutError(f"several games under {Path(root)}: {', '.join(games)}; choose one with --game NAME")
