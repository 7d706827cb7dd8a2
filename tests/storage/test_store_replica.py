"""A worker's replica of the pipeline's data directory, filled through a store (shared.store.replica), on the local
backend: models adopted with their numbers and checked by sha256, shards published once and fetched whole, the
replica's identity, and a training job refused on a replica."""
from __future__ import annotations

from pathlib import Path

import pytest

from services.payloads import PayloadError, WorkerContext
from shared.layout import DataLayout, LayoutError
from shared.registry import ModelRegistry
from shared.store import StoreError, StoreIntegrityError, claim_store, open_store
from shared.store.replica import fetch_shard, publish_shard, publish_version, replicate_version


@pytest.fixture
def primary(tmp_path: Path, model_file: Path) -> DataLayout:
    """The pipeline's data directory with two tic-tac-toe versions."""
    layout = DataLayout(tmp_path / "primary", "tictactoe")
    layout.data_id()
    registry = ModelRegistry(layout.registry_dir)
    first = registry.register(model_file, generation=0)
    registry.register(model_file, parent=first.version, generation=1)
    return layout


def test_a_published_version_is_adopted_with_its_number_and_checksum(tmp_path: Path, primary: DataLayout) -> None:
    store = open_store(str(tmp_path / "store"))
    assert publish_version(store, primary, "000002") is True
    assert publish_version(store, primary, "2") is False                   # published once
    replica = DataLayout(tmp_path / "replica", "tictactoe")
    replicate_version(store, replica, "000002")
    replicate_version(store, replica, "000002")                             # nothing to do the second time
    adopted = ModelRegistry(replica.registry_dir).verify("000002")
    original = ModelRegistry(primary.registry_dir).get("000002")
    assert (adopted.checksum, adopted.parent, adopted.generation) == (original.checksum, "000001", 1)
    assert [v.version for v in ModelRegistry(replica.registry_dir).list()] == ["000002"]
    assert ModelRegistry(replica.registry_dir).history() == []              # adoption is not an event


def test_a_model_changed_in_the_store_is_never_installed(tmp_path: Path, primary: DataLayout) -> None:
    store = open_store(str(tmp_path / "store"))
    publish_version(store, primary, "000001")
    key = primary.store_key(primary.registry.model_path("000001"))
    (store.root / key).write_bytes(b"not the model")                        # changed behind zeroforge's back
    replica = DataLayout(tmp_path / "replica", "tictactoe")
    with pytest.raises(StoreIntegrityError, match="changed outside zeroforge"):
        replicate_version(store, replica, "000001")
    assert not replica.registry.version_dir("000001").exists()
    assert not [p for p in replica.root.rglob("*") if p.is_file()]          # no partial download left behind


def test_shards_are_published_once_and_fetched_whole(tmp_path: Path, make_shard, layout: DataLayout) -> None:
    store = open_store(str(tmp_path / "store"))
    shard = make_shard(1, "job-a")
    assert publish_shard(store, layout, shard) is True
    assert publish_shard(store, layout, shard) is False
    relative = layout.store_key(shard)
    assert relative == "games/connect4/shards/gen-000001/job-a.h5"
    elsewhere = DataLayout(tmp_path / "elsewhere", "connect4")
    fetched = fetch_shard(store, elsewhere, relative)
    assert fetched.read_bytes() == shard.read_bytes()
    assert fetch_shard(store, elsewhere, relative) == fetched                # already there: not downloaded again
    with pytest.raises(LayoutError, match="not inside the data directory"):
        fetch_shard(store, elsewhere, "../outside.h5")


def test_a_replica_takes_the_deployments_identity_and_never_trains(tmp_path: Path, primary: DataLayout) -> None:
    from services.trainer import train_job

    store = open_store(str(tmp_path / "store"))
    identity = primary.data_id()
    context = WorkerContext(data_dir=tmp_path / "replica", store=str(tmp_path / "store"))
    with pytest.raises(StoreError, match="holds no zeroforge deployment yet"):
        context.layout("tictactoe", identity)
    claim_store(store, identity)
    assert context.layout("tictactoe", identity).data_id(create=False) == identity
    with pytest.raises(StoreError, match="belongs to another zeroforge deployment"):
        context.layout("tictactoe", "ba9876543210")
    with pytest.raises(PayloadError, match="training runs where the pipeline's data directory is"):
        train_job({"data_id": identity}, context)


def test_the_store_share_line_counts_played_jobs_only() -> None:
    from flows.generation import store_share
    from services.payloads import SelfPlayResult

    def result(seconds: float, store_seconds: float, reused: bool = False) -> SelfPlayResult:
        return SelfPlayResult(shard="s.h5", games=1, positions=1, first_player_wins=1, draws=0, second_player_wins=0,
                              seconds=seconds, positions_per_s=None, reused=reused, store_seconds=store_seconds)

    line = store_share([result(99.0, 1.0), result(0.0, 0.0, reused=True)], 1, 0.25)
    assert line == "1.00 s of 100.0 s of jobs (1.0%), 1 shards fetched in 0.25 s"


def test_a_host_with_the_store_alone_mirrors_a_games_shards(tmp_path: Path, make_shard, layout: DataLayout) -> None:
    from shared.store.replica import mirror_shards, store_games

    store = open_store(str(tmp_path / "store"))
    for generation, job in ((1, "job-a"), (2, "job-b")):
        publish_shard(store, layout, make_shard(generation, job))
    assert store_games(store) == ["connect4"]
    view = DataLayout(tmp_path / "view", "connect4")
    assert mirror_shards(store, view) == 2 and mirror_shards(store, view) == 0
    assert sorted(p.name for p in view.shards_dir.rglob("*.h5")) == ["job-a.h5", "job-b.h5"]
