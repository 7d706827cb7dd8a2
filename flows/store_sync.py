"""The pipeline's side of the object store (`[pipeline] store`, shared.store.replica): publish the models that
queued jobs will play, fetch the shards that workers on other hosts published, and keep the store's registry view
(shared.store.view) current for hosts that read the run with only the store. Without a store these do nothing:
the workers share the data directory."""
from __future__ import annotations

import logging
from collections.abc import Iterable

from shared.config import PipelineConfig
from shared.layout import DataLayout
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


def publish_registry_view(config: PipelineConfig, layout: DataLayout) -> bool:
    """Replace the run's store's registry view of the game (at the start of each generation, after each promotion
    decision and when the run ends); False when the run has no store or the store failed (logged as a warning: the
    view serves readers, the run goes on without it and publishes it again at its next change)."""
    store = pipeline_store(config)
    if store is None:
        return False
    try:
        publish_view(store, layout)
    except StoreError as exc:
        log.warning("could not publish the registry view of %s to %s (%s)", layout.game_name, store.url, exc)
        return False
    return True
