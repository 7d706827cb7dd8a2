"""What crosses the store between the pipeline's data directory and a worker's replica of it.

Store keys are the data directory's own relative paths (DataLayout.store_key), so a worker on another host keeps
a partial replica of the pipeline's data directory in a directory of its own, and every job runs there as it
runs on a shared data directory:
- the pipeline publishes each model version its jobs play (the model file, then its meta.json as it is at that
  moment: a meta in the store means its model is there), before it enqueues them (`publish_version`);
- a worker adopts a version into its replica's registry on first use (`replicate_version`): the model is checked
  against the record's sha256 before it is installed, and again by the registry each time a job loads it;
- a worker publishes each shard it writes (`publish_shard`, create-only: a retried or duplicated job never leaves
  two copies) and keeps no local copy; the pipeline fetches the shards it lacks when the jobs are done
  (`fetch_shard`, written whole or not at all, never over an existing file).
Training stays where the data directory is: it reads the replay window and registers the candidate there.
"""
from __future__ import annotations

import json
from pathlib import Path

from shared.atomic import fsync_dir, publish_once, temp_path_for
from shared.layout import DataLayout
from shared.registry import ModelRegistry, RegistryError
from shared.registry.files import sha256_of_file
from shared.registry.version import normalise_version
from shared.store.base import ObjectStore
from shared.store.errors import StoreIntegrityError


def publish_version(store: ObjectStore, layout: DataLayout, version: str) -> bool:
    """Publish model `version` of the data directory's registry (its file checked first); True when this call
    uploaded it, False when the store had it already. RegistryError for an unknown or damaged version."""
    record = ModelRegistry(layout.registry_dir).verify(version)
    meta_key = layout.store_key(layout.registry.meta_path(record.version))
    if store.exists(meta_key):
        return False
    store.put_file(layout.store_key(record.path), record.path)
    return store.put_bytes(meta_key, json.dumps(record.to_meta(), sort_keys=True).encode("utf-8"))


def replicate_version(store: ObjectStore, layout: DataLayout, version: str) -> None:
    """Make model `version` present in the replica's registry (nothing to do when it is). StoreIntegrityError
    when the store's model is not the one its record names; ObjectMissingError when the store lacks it."""
    name = normalise_version(version)
    registry = ModelRegistry(layout.registry_dir)
    if layout.registry.model_path(name).is_file():
        return
    if layout.registry.version_dir(name).is_dir():   # a record materialised from the registry view, no model yet
        fetch_model(store, layout, name)
        return
    meta_key = layout.store_key(layout.registry.meta_path(name))
    try:
        meta = json.loads(store.get_bytes(meta_key))
    except ValueError:
        raise StoreIntegrityError(f"the store's {meta_key} is not a model record; it was changed outside "
                                  "zeroforge") from None
    model_key = layout.store_key(layout.registry.model_path(name))
    download = temp_path_for(layout.registry.model_path(name).parent.parent / f"{name}.download")
    download.parent.mkdir(parents=True, exist_ok=True)
    try:
        store.get_file(model_key, download)
        if not isinstance(meta, dict) or sha256_of_file(download) != meta.get("checksum"):
            raise _changed_model(model_key)
        try:
            registry.adopt(meta, download)
        except RegistryError as exc:
            raise StoreIntegrityError(f"the store's record of version {name} is not usable: {exc}") from None
    finally:
        download.unlink(missing_ok=True)


def _changed_model(key: str) -> StoreIntegrityError:
    return StoreIntegrityError(f"the store's {key} is not the model its record names (sha256 differs): it was "
                               "changed outside zeroforge; restore it or roll back to another version")


def fetch_model(store: ObjectStore, layout: DataLayout, version: str) -> Path:
    """The model file of `version`, whose record the replica's registry holds (materialised from the registry view,
    shared.store.view), downloaded when it is not there yet: checked against the record's sha256, then installed
    whole, never over an existing file. StoreIntegrityError when the store's bytes are not the recorded model;
    ObjectMissingError when the store lacks it; RegistryError for an unknown version."""
    record = ModelRegistry(layout.registry_dir).get(version)
    if record.path.is_file():
        return record.path
    key = layout.store_key(record.path)
    tmp = temp_path_for(record.path)
    try:
        store.get_file(key, tmp)
        if sha256_of_file(tmp) != record.checksum:
            raise _changed_model(key)
        publish_once(tmp, record.path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(record.path.parent)
    return record.path


def publish_shard(store: ObjectStore, layout: DataLayout, path: Path) -> bool:
    """Publish the shard file at `path` (inside the data directory) under its key; True when this call created
    the object, False when a shard of that job was published before (that one stands)."""
    return store.put_file(layout.store_key(path), path)


def fetch_shard(store: ObjectStore, layout: DataLayout, relative: str) -> Path:
    """The local path of the shard `relative` (its path relative to the data directory), downloaded when it is
    not there yet: whole or not at all, never replacing a file. ObjectMissingError when the store lacks it."""
    target = layout.root / relative
    key = layout.store_key(target)             # LayoutError for a path outside the data directory
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(target)
    try:
        store.get_file(key, tmp)
        publish_once(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(target.parent)
    return target



def store_games(store: ObjectStore) -> list[str]:
    """The games that have objects in the store (from the keys' `games/<game>/` folders), sorted."""
    return sorted({info.key.split("/")[1] for info in store.list("games") if info.key.count("/") >= 2})


def mirror_shards(store: ObjectStore, layout: DataLayout) -> int:
    """Fetch every shard of the layout's game that the store holds and the data directory lacks (a host that
    inspects shards with a store and no data directory of the pipeline); returns how many were fetched."""
    missing = [info.key for info in store.list(layout.store_key(layout.shards_dir)) if not (layout.root / info.key).exists()]
    for key in missing:
        fetch_shard(store, layout, key)
    return len(missing)
