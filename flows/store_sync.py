"""The pipeline's side of the object store (`[pipeline] store`, shared.store.replica): publish the models that
queued jobs will play, fetch the shards that workers on other hosts published, and keep the store's registry view
(shared.store.view) current for hosts that read the run with only the store. Without a store these do nothing:
the workers share the data directory."""
from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from shared.atomic import atomic_output
from shared.config import PipelineConfig
from shared.layout import DataLayout, store_url_file
from shared.store import ObjectStore, StoreError, open_store
from shared.store.replica import fetch_shard, publish_version
from shared.store.view import publish_view

log = logging.getLogger(__name__)


def pipeline_store(config: PipelineConfig) -> ObjectStore | None:
    """The run's object store, None when it has none."""
    if config.pipeline.store is None:
        return None
    return open_store(config.pipeline.store, outage_s=config.pipeline.store_outage_s)


def publish_models(config: PipelineConfig, layout: DataLayout, versions: Iterable[str]) -> None:
    """Publish registry `versions` to the run's store before jobs that play them are enqueued."""
    store = pipeline_store(config)
    if store is not None:
        for version in dict.fromkeys(versions):
            publish_version(store, layout, version)


def fetch_shards(config: PipelineConfig, layout: DataLayout, shards: Iterable[str]) -> int:
    """Download the shards (paths relative to the data directory, as jobs report them) that the data directory
    lacks from the run's store; returns how many were downloaded."""
    store = pipeline_store(config)
    if store is None:
        return 0
    missing = [s for s in shards if not (layout.root / s).exists()]
    for relative in missing:
        fetch_shard(store, layout, relative)
    return len(missing)


def _publish_view(store: ObjectStore, layout: DataLayout) -> bool:
    """publish_view, with a store error logged as a warning instead of raised (the view serves readers; the run
    goes on without it and publishes it again at its next change); True when published."""
    try:
        publish_view(store, layout)
    except StoreError as exc:
        log.warning("could not publish the registry view of %s to %s (%s)", layout.game_name, store.url, exc)
        return False
    return True


def publish_registry_view(config: PipelineConfig, layout: DataLayout) -> bool:
    """Replace the run's store's registry view of the game (at the start of each generation, after each promotion
    decision and when the run ends); False when the run has no store or the store failed (logged)."""
    store = pipeline_store(config)
    return store is not None and _publish_view(store, layout)


def record_store_url(root: Path, url: str | None) -> None:
    """Record the run's store URL in the data root (shared.layout.store_url_file), or forget it (url None), so that
    registry changes made outside the pipeline's generations republish the view (`republish_recorded_view`)."""
    path = store_url_file(root)
    if url is None:
        path.unlink(missing_ok=True)
        return
    with atomic_output(path) as handle:
        handle.write((str(url) + "\n").encode("utf-8"))


def republish_recorded_view(layout: DataLayout) -> bool:
    """Republish the view of `layout`'s game to the store the data root's last `zeroforge run --store` recorded
    (after a rollback or promotion from the UI or the CLI on the data directory); False when none is recorded or
    the store failed (logged)."""
    try:
        url = store_url_file(layout.root).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return False
    try:
        store = open_store(url, outage_s=30)
    except StoreError as exc:
        log.warning("could not open the recorded store %s (%s)", url, exc)
        return False
    return _publish_view(store, layout)
