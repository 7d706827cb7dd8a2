"""Typed job payloads and results: what travels through rq (as JSON) for each job kind, and what comes back.

Each job function takes one validated payload and the `WorkerContext` of the worker that runs it, and returns
a typed result; both cross Redis as `model_dump(mode="json")` dicts. The data directory and the device are
worker settings (WorkerContext), never job arguments: a job names only things inside the worker's data
directory (a generation, model versions, a job id), and carries the data directory's identity so that a
worker started on another data directory refuses it. A worker with a store (WorkerContext.store) runs its jobs in
a replica of the pipeline's data directory that it fills from the store (shared.store.replica).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from shared.config import GatekeeperConfig, SelfPlayServiceConfig, TrainerConfig
from shared.layout import DataLayout, LayoutError, adopt_data_id
from shared.players.spec import PlayerSpecError, parse_player_spec
from shared.registry.actor import MAX_ACTOR_CHARS

Version = Annotated[str, StringConstraints(pattern=r"^[0-9]{6,9}$")]
#: A job id is a file name (the shard's) and never a path: no separator, no leading dot.
JobId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")]
DataId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{12}$")]


def _match_player(text: str) -> str:
    """A player spec that shared.players.spec parses, other than a model file (jobs name no outside paths)."""
    try:
        spec = parse_player_spec(text)
    except PlayerSpecError as exc:
        raise ValueError(str(exc)) from None
    if spec.kind == "file":
        raise ValueError(f"{text!r}: a match job names players by spec or registry version, never by a file path")
    return text


#: A player spec as shared.players.spec parses it; model files are not allowed in jobs (no outside paths).
MatchPlayer = Annotated[str, StringConstraints(max_length=64), AfterValidator(_match_player)]
Generation = Annotated[int, Field(ge=0, le=1_000_000)]
MAX_OPENINGS = 50_000
Seed = Annotated[int, Field(ge=0, le=2**63 - 1)]


class PayloadError(ValueError):
    """A job that this worker must not run (another data directory); the message says why."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WorkerContext(_Frozen):
    """The settings of the worker process that runs a job: where its data lives and which device it uses."""

    data_dir: Path
    device: str = "cpu"
    #: network precision: auto | fp32 | bf16 (shared.network.precision); None -> bf16 on CUDA, fp32 on CPU
    precision: Literal["auto", "fp32", "bf16"] | None = None
    #: self-play overlap of two game groups (SelfPlayConfig.overlap): auto = on for CUDA devices, off on CPU
    overlap: Literal["auto", "on", "off"] = "auto"
    #: self-play processes sharing this worker's one network (services.inference); 1 = play in this process
    processes: Annotated[int, Field(ge=1, le=256)] = 1
    #: the deployment's object store URL (shared.store.url) when data_dir is this worker's replica of the pipeline's
    #: data directory, not that directory itself; None: data_dir is the pipeline's (one machine or a shared mount)
    store: str | None = None
    #: how long a store request is retried while the store does not answer (seconds)
    store_outage_s: Annotated[float, Field(gt=0, le=86_400)] = 120.0

    def object_store(self):
        """The ObjectStore of `store` (one per process and URL); None without a store."""
        return None if self.store is None else _open_store(self.store, self.store_outage_s)

    def selfplay_overlap(self) -> bool:
        """Whether this worker's self-play jobs overlap search and network (see `overlap`)."""
        if self.overlap == "auto":
            return self.device.startswith("cuda")
        return self.overlap == "on"

    def layout(self, game_name: str, data_id: str) -> DataLayout:
        """The job's DataLayout; PayloadError when the job was made for another data directory."""
        layout = DataLayout(self.data_dir, game_name)
        if self.store is not None:      # a replica takes the identity of the deployment whose store it reads
            from shared.store import check_store

            check_store(self.object_store(), data_id)
            try:
                adopt_data_id(self.data_dir, data_id)
            except LayoutError as exc:
                raise PayloadError(str(exc)) from None
        own = layout.data_id(create=False)
        if own != data_id:
            raise PayloadError(f"job for data directory {data_id} refused: this worker serves {self.data_dir} "
                               f"({own}); start a worker with --data-dir pointing at that run's data directory")
        return layout


@lru_cache(maxsize=4)
def _open_store(url: str, outage_s: float):
    from shared.store import open_store

    return open_store(url, outage_s=outage_s)


class SelfPlayPayload(_Frozen):
    """One self-play job: play config.selfplay.games_per_job games with `model_version`, write shard `job_id`."""

    data_id: DataId
    config: SelfPlayServiceConfig
    generation: Generation
    model_version: Version
    job_id: JobId
    seed: Seed


class SelfPlayResult(_Frozen):
    shard: str                     # the shard's path relative to the data directory
    games: int
    positions: int
    first_player_wins: int
    draws: int
    second_player_wins: int
    seconds: float
    positions_per_s: float | None
    reused: bool
    store_seconds: float = 0.0     # model download and shard upload of a worker with a store (not in seconds)
    # resignation ([selfplay] resign_threshold), shared.shards.gameinfo.ResignCounts
    resigned_games: int = 0        # games ended by a resignation
    no_resign_games: int = 0       # games not allowed to resign
    would_resign_games: int = 0    # of those, games in which the resign rule fired
    false_resignations: int = 0    # of those, games the would-be resigner won or drew


class TrainPayload(_Frozen):
    """One training job: train `parent_version` on the replay window into a candidate of `generation`."""

    data_id: DataId
    config: TrainerConfig
    generation: Generation = Field(ge=1)
    parent_version: Version
    seed: Seed


class TrainResult(_Frozen):
    version: str
    parent: str
    generation: int
    reused: bool
    steps: int
    batch_size: int
    positions: int
    shards: list[str]
    bad_shards: list[str]
    loss: float
    policy_loss: float
    value_loss: float
    first_loss: float
    seconds: float
    device: str
    new_positions: int | None = None   # positions of this generation's shards (None: a candidate from before)
    ownership_loss: float | None = None  # the ownership head's loss (None: no ownership head)
    # share of the window's value targets that train.value_cut_at_sampled_moves changed from z (None: the option off)
    value_targets_cut: float | None = None
    # rows of the replay window merged into other rows by train.merge_duplicate_positions (None: the option off)
    duplicates_merged: int | None = None


class MatchPayload(_Frozen):
    """One chunk of a paired match: openings `opening_indices` of the `num_openings`-opening set, twice each."""

    data_id: DataId
    config: GatekeeperConfig
    player_a: MatchPlayer
    player_b: MatchPlayer
    opening_indices: list[Annotated[int, Field(ge=0, lt=MAX_OPENINGS)]] = Field(min_length=1, max_length=MAX_OPENINGS)
    num_openings: int = Field(ge=1, le=MAX_OPENINGS)
    simulations: int = Field(ge=1, le=100_000)
    seed: Seed
    # openings of these lengths made of any legal moves (the gate's gate.opening_plies); None: the family's plan
    opening_plies: tuple[Annotated[int, Field(ge=1, le=1000)], ...] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _openings_exist(self) -> "MatchPayload":
        if max(self.opening_indices) >= self.num_openings:
            raise ValueError(f"opening index {max(self.opening_indices)} >= num_openings {self.num_openings}")
        return self


class PairScores(_Frozen):
    """A's points (1 win, .5 draw, 0 loss) in the two games of one opening: A first, then B first."""

    opening: int
    scores: tuple[float, float]


class MatchChunkResult(_Frozen):
    pairs: list[PairScores]
    seconds: float
    stopped: bool = False      # canceled while it played: no pairs (services.job_cancel)


class RegistryChangePayload(_Frozen):
    """One change of a game's registry: `action` of `version` with `reason`, made by `by` (user@host of the asking
    command), `force` as the command's --force."""

    data_id: DataId
    game: Annotated[str, StringConstraints(max_length=64)]
    action: Literal["promote", "reject", "rollback"]
    version: Annotated[str, StringConstraints(pattern=r"^[0-9]{1,9}$")]
    reason: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    force: bool = False
    by: Annotated[str, StringConstraints(min_length=1, max_length=MAX_ACTOR_CHARS)]


class RegistryChangeResult(_Frozen):
    """What the change did: `entry` the history entry written (None when nothing changed), `version` the version
    as the registry names it, `error` the registry's one-line refusal (then nothing changed)."""

    entry: dict[str, Any] | None = None
    version: str = ""
    error: str | None = None
