"""Where zeroforge keeps its files and how its jobs are named: the one home of every path and job id.

Layout under a data root (default `./zeroforge-data`, or env ZEROFORGE_DATA_DIR):

    <root>/zeroforge-id                                  the data directory's identity (random, made once)
    <root>/logs/                                        logs of the local workers `zeroforge run` starts
    <root>/prefect/                                     PREFECT_HOME of the runs started on this data directory
    <root>/prefect/ui-server.json                       the `zeroforge ui` server serving it (while one runs), its port
    <root>/redis-url                                    the private Redis of a running `zeroforge run` (mode 0600)
    <root>/store-url                                    the object store of the last `zeroforge run --store` here
    <root>/tensorboard/<game>/                          TensorBoard event files, one run per game (`tensorboard --logdir <root>/tensorboard`)
    <root>/games/<game>/shards/gen-000003/<job_id>.h5   self-play shards, one folder per generation
    <root>/games/<game>/quarantine/                     damaged shards moved out of the way
    <root>/games/<game>/models/                         the model registry (see RegistryLayout)
    <root>/games/<game>/checkpoints/                    trainer checkpoints, the initial model before registration
    <root>/games/<game>/reports/strength.png            the strength-over-generations plot
    <root>/games/<game>/reports/generations.jsonl       one line of figures per finished generation (the curves' data)
    <root>/games/<game>/reports/curves.png              the per-generation curves plot
    <root>/games/<game>/reports/oracle-set-200.npz      the labelled positions of the oracle figures (built once)
    <root>/games/<game>/STOP                            touch it to stop a pipeline after its current generation
    <root>/games/<game>/phase.json                      what the pipeline is doing now (`zeroforge status` reads it)
    <root>/games/<game>/registry-view.json              the registry view the pipeline publishes to its store (the
                                                        store key; a replica keeps its last copy here)

A host with only the store keeps its replica of a deployment in store_cache_root(<deployment id>)
($XDG_CACHE_HOME/zeroforge/store/<id>, else ~/.cache/zeroforge/store/<id>).

Inside a registry directory (RegistryLayout):

    versions/000001/model.pt   versions/000001/meta.json   best.json   history.jsonl   registry.lock

Job ids (JobIds) are built from the data directory's identity, the game and the generation, so two pipelines
sharing one Redis never share a job, and a data directory deleted and made again never sees the old results.
Every other module asks this one for paths and job ids instead of joining strings itself.
"""
from __future__ import annotations

import glob
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from shared.shards.schema import shard_file_name

DATA_DIR_ENV = "ZEROFORGE_DATA_DIR"
DEFAULT_DATA_DIR_NAME = "zeroforge-data"
SHIPPED_MODELS_DIR = Path(__file__).resolve().parent / "shipped_models"

#: File names inside one registry version folder (also used while the folder is staged).
MODEL_FILE_NAME = "model.pt"
META_FILE_NAME = "meta.json"

_GAMES_DIR = "games"
_ID_FILE = "zeroforge-id"
_SAFE_GAME_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_DATA_ID = re.compile(r"^[0-9a-f]{12}$")


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


def _generation_text(generation: int) -> str:
    if isinstance(generation, bool) or not isinstance(generation, int) or generation < 0:
        raise LayoutError(f"generation must be an integer >= 0, got {generation!r}")
    return f"{generation:06d}"


def shipped_model_path(game_name: str) -> Path:
    """Where the model shipped with zeroforge for `game_name` lives inside the installed package (may not exist)."""
    return SHIPPED_MODELS_DIR / f"{check_game_name(game_name)}.pt"


def shipped_record_path(game_name: str) -> Path:
    """The JSON training record next to the shipped model of `game_name` (may not exist)."""
    return SHIPPED_MODELS_DIR / f"{check_game_name(game_name)}.json"


def shipped_model_names() -> list[str]:
    """Sorted names of the games that have a shipped model."""
    return sorted(p.stem for p in SHIPPED_MODELS_DIR.glob("*.pt"))


def logs_dir(root: Path) -> Path:
    """<root>/logs: logs of the local worker processes."""
    return Path(root) / "logs"


def prefect_home(root: Path) -> Path:
    """<root>/prefect: PREFECT_HOME (database, settings) of the runs on data root `root`."""
    return Path(root).resolve() / "prefect"


def ui_server_file(root: Path) -> Path:
    """<root>/prefect/ui-server.json: where `zeroforge ui` records the Prefect server it runs for data root `root`
    (and, after it stops, the port it used)."""
    return prefect_home(root) / "ui-server.json"


def redis_url_file(root: Path) -> Path:
    """<root>/redis-url: the URL (password included, file mode 0600) of the private Redis that a running
    `zeroforge run` started for data root `root`, so that `zeroforge status` finds it; removed when the run ends."""
    return Path(root) / "redis-url"


def store_url_file(root: Path) -> Path:
    """<root>/store-url: the object store URL (no credentials: those stay in AWS_* variables) of the last
    `zeroforge run --store` on data root `root`, so that registry changes made here republish the store's view."""
    return Path(root) / "store-url"


def store_cache_root(identity: str) -> Path:
    """The data root of the replica a host with only the store keeps of deployment `identity` (12 hex digits):
    $XDG_CACHE_HOME/zeroforge/store/<identity>, else ~/.cache/zeroforge/store/<identity>. LayoutError for a
    malformed identity."""
    if not _DATA_ID.match(identity):
        raise LayoutError(f"{identity!r} is not a data directory identity (12 hex digits)")
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "zeroforge" / "store" / identity


def tensorboard_dir(root: Path) -> Path:
    """<root>/tensorboard: the TensorBoard log directory of data root `root` (one run folder per game inside)."""
    return Path(root) / "tensorboard"


def data_id(root: Path, create: bool = True) -> str:
    """The identity of data root `root`: 12 hex digits kept in <root>/zeroforge-id, made on first use.

    Creation is atomic (O_EXCL), so concurrent first users agree on one id. LayoutError when the file is
    damaged, or missing with create=False.
    """
    path = Path(root) / _ID_FILE
    if not path.exists() and create:
        Path(root).mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(6) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise LayoutError(f"cannot read the data directory's identity {path} ({exc}); "
                          "check --data-dir (a zeroforge data directory has this file)") from None
    if not _DATA_ID.match(text):
        raise LayoutError(f"{path} is damaged (expected 12 hex digits); delete it only if no run uses this data directory")
    return text


def adopt_data_id(root: Path, identity: str) -> str:
    """Give the data root `root` the identity `identity` (12 hex digits) of the deployment whose replica it holds
    (a worker's directory on another host, shared.store.replica), unless it has one; returns the root's identity,
    which the caller compares. LayoutError for a malformed identity."""
    if not _DATA_ID.match(identity):
        raise LayoutError(f"{identity!r} is not a data directory identity (12 hex digits)")
    path = Path(root) / _ID_FILE
    Path(root).mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return data_id(root, create=False)
    with os.fdopen(fd, "w") as handle:
        handle.write(identity + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return identity


@dataclass(frozen=True)
class RegistryLayout:
    """Paths inside one model registry directory."""

    directory: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "directory", Path(self.directory))

    @property
    def versions_dir(self) -> Path:
        return self.directory / "versions"

    def version_dir(self, version: str) -> Path:
        """versions/<version> (version already normalised, e.g. '000003')."""
        return self.versions_dir / version

    def model_path(self, version: str) -> Path:
        return self.version_dir(version) / MODEL_FILE_NAME

    def meta_path(self, version: str) -> Path:
        return self.version_dir(version) / META_FILE_NAME

    def staging_dir(self, token: str) -> Path:
        """A hidden folder in versions/ where a new version is assembled before its rename into place."""
        return self.versions_dir / f".staging-{token}"

    @property
    def best_path(self) -> Path:
        return self.directory / "best.json"

    @property
    def history_path(self) -> Path:
        return self.directory / "history.jsonl"

    @property
    def lock_path(self) -> Path:
        return self.directory / "registry.lock"


@dataclass(frozen=True)
class DataLayout:
    """Paths for one game under one data root. Only builds paths; it creates nothing."""

    root: Path
    game_name: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))
        check_game_name(self.game_name)

    # ----- the data root ------------------------------------------------------------------------
    @property
    def logs_dir(self) -> Path:
        return logs_dir(self.root)

    def store_key(self, path: Path) -> str:
        """The object store key of the data directory's file `path`: its path relative to the root, POSIX style
        (shared.store.replica). LayoutError for a path outside the data directory."""
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            raise LayoutError(f"{path} is not inside the data directory {self.root}") from None

    @property
    def prefect_home(self) -> Path:
        return prefect_home(self.root)

    def data_id(self, create: bool = True) -> str:
        """The data root's identity (see `data_id`)."""
        return data_id(self.root, create)

    # ----- one game --------------------------------------------------------------------------------
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
        return self.shards_dir / f"gen-{_generation_text(generation)}"

    def shard_path(self, generation: int, job_id: str) -> Path:
        """The shard the self-play job `job_id` of `generation` writes."""
        return self.generation_shards_dir(generation) / shard_file_name(job_id)

    def find_shard(self, job_id: str) -> Path | None:
        """The published shard of self-play job `job_id` in any generation folder (the newest generation
        when several hold one), None when there is none. Reads the directory; creates nothing."""
        name = shard_file_name(job_id)
        if "/" in job_id or "\\" in job_id or job_id in ("", ".", "..") or not self.shards_dir.is_dir():
            return None
        found = sorted(p for p in self.shards_dir.glob(f"gen-*/{glob.escape(name)}") if p.is_file())
        return found[-1] if found else None

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

    def checkpoint_path(self, generation: int, parent: str) -> Path:
        """The resumable training checkpoint of `generation` trained from version `parent`."""
        return self.checkpoints_dir / f"gen-{_generation_text(generation)}-from-{parent}.ckpt"

    def candidate_path(self, generation: int, parent: str) -> Path:
        """Where the trained candidate is written before the registry copies it in."""
        return self.checkpoints_dir / f"gen-{_generation_text(generation)}-from-{parent}-candidate.pt"

    @property
    def initial_model_path(self) -> Path:
        """Where the random initial network is written before the registry copies it in."""
        return self.checkpoints_dir / "initial.pt"

    @property
    def reports_dir(self) -> Path:
        """<root>/games/<game>/reports: plots and reports."""
        return self.game_dir / "reports"

    @property
    def strength_plot_path(self) -> Path:
        return self.reports_dir / "strength.png"

    @property
    def registry_view_path(self) -> Path:
        """<root>/games/<game>/registry-view.json: the registry view of the game (shared.store.view); its store key
        is this path's, and a replica keeps the view it materialised here."""
        return self.game_dir / "registry-view.json"

    @property
    def metrics_path(self) -> Path:
        """<root>/games/<game>/reports/generations.jsonl: one JSON line per finished generation (flows.curves)."""
        return self.reports_dir / "generations.jsonl"

    def oracle_set_path(self, positions: int) -> Path:
        """<root>/games/<game>/reports/oracle-set-<positions>.npz: the run's labelled positions for the oracle
        figures ([pipeline] oracle_positions asked for `positions`)."""
        return self.reports_dir / f"oracle-set-{positions}.npz"

    @property
    def curves_plot_path(self) -> Path:
        """<root>/games/<game>/reports/curves.png: loss, speed, game length, gate and anchor over generations."""
        return self.reports_dir / "curves.png"

    @property
    def tensorboard_run_dir(self) -> Path:
        """<root>/tensorboard/<game>: this game's TensorBoard run (per-step training and per-generation curves)."""
        return tensorboard_dir(self.root) / self.game_name

    @property
    def stop_file(self) -> Path:
        """Touch this file to stop a running pipeline after its current generation."""
        return self.game_dir / "STOP"

    @property
    def phase_file(self) -> Path:
        """<root>/games/<game>/phase.json: the pipeline's generation and phase, written atomically by the flows."""
        return self.game_dir / "phase.json"

    @property
    def registry(self) -> RegistryLayout:
        return RegistryLayout(self.registry_dir)

    def job_ids(self) -> JobIds:
        """The job names of this game on this data root (creates the data root's identity if needed)."""
        return JobIds(self.data_id(), self.game_name)


@dataclass(frozen=True)
class JobIds:
    """Deterministic rq job ids: `zf-<data id>-<game>-g<generation>-<role>`.

    A resumed flow re-enqueues the same ids (finished jobs are reused, never run twice).
    """

    data_id: str
    game_name: str

    @property
    def prefix(self) -> str:
        """What every job id of this data directory and game starts with."""
        return f"zf-{self.data_id}-{self.game_name}-g"

    def _prefix(self, generation: int) -> str:
        return f"{self.prefix}{_generation_text(generation)}"

    def selfplay(self, generation: int, model_version: str, index: int) -> str:
        """Self-play job `index` of `generation` with `model_version` (the version is in the id, so after a
        manual promote or rollback an unfinished generation plays its remaining games with the new best)."""
        return f"{self._prefix(generation)}-m{model_version}-sp{index:04d}"

    def train(self, generation: int, parent: str) -> str:
        return f"{self._prefix(generation)}-train-{parent}"

    def gate(self, generation: int, candidate: str, best: str, index: int) -> str:
        """Eval job `index` of the gate of `candidate` against `best`."""
        return f"{self._prefix(generation)}-gate-{candidate}-vs-{best}-m{index:03d}"

    def anchor(self, generation: int, version: str, index: int) -> str:
        """Eval job `index` of the anchor match of new best `version`."""
        return f"{self._prefix(generation)}-anchor-{version}-m{index:03d}"

    def registry_change(self, token: str) -> str:
        """A registry change asked for from a host with only the store (services.registry_job); `token` makes
        each request its own job (a change is not tied to a generation)."""
        return f"zf-{self.data_id}-{self.game_name}-registry-{token}"


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
