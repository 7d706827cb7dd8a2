"""The registry view: what a host with only the store needs to read a game's run as its data directory shows it.

The pipeline publishes, per game, ONE object under the key of DataLayout.registry_view_path, replaced whole each
time (`publish_view`): every version's record as ModelRegistry lists it, and the text of the registry's best.json
and history.jsonl, of the phase record and of the metrics file (the curves' data). Before that it publishes the
model file and first record of every version the store lacks (shared.store.replica.publish_version), so every
version the view lists can be fetched.

A reader materialises the view into a replica of the data directory (`materialise_view`): the records as
versions/NNNNNN/meta.json, the files at their own paths, and a copy of the view itself at registry_view_path,
which marks the directory as a replica. The normal ModelRegistry, status and metrics code then reads it as it
reads the pipeline's data directory; the model files a command needs come with shared.store.replica.fetch_model
(sha256-checked). The pipeline's own data directory is never overwritten: a registry with a best pointer and no
view copy is refused.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from shared.atomic import atomic_output
from shared.layout import DataLayout, store_url_file
from shared.registry import ModelRegistry, RegistryError
from shared.registry.files import to_json_text, write_bytes_atomic
from shared.registry.registry import utc_now
from shared.registry.version import normalise_version, version_from_meta
from shared.store.base import ObjectMissingError, ObjectStore
from shared.store.errors import StoreError, StoreIntegrityError
from shared.store.url import parse_store_url
from shared.store.replica import publish_version

VIEW_FORMAT = 1

log = logging.getLogger(__name__)


def _view_files(layout: DataLayout) -> dict[str, Path]:
    """The data directory's files a view carries whole, by their name in the view."""
    return {"best": layout.registry.best_path, "history": layout.registry.history_path,
            "phase": layout.phase_file, "metrics": layout.metrics_path}


def registry_view(layout: DataLayout) -> dict[str, Any]:
    """The view of `layout`'s game: {"format": 1, "game", "published" (ISO UTC), "versions": [meta.json object of
    each readable version, oldest first], "files": {"best", "history", "phase", "metrics": the file's text or
    None when it does not exist}}."""
    records, _ = ModelRegistry(layout.registry_dir).scan()
    files: dict[str, str | None] = {}
    for name, path in _view_files(layout).items():
        try:
            files[name] = path.read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            files[name] = None
    return {"format": VIEW_FORMAT, "game": layout.game_name, "published": utc_now(),
            "versions": [record.to_meta() for record in records], "files": files}


def publish_view(store: ObjectStore, layout: DataLayout) -> dict[str, Any]:
    """Publish the models the store lacks (one listing, then publish_version for each; a version whose model file
    is damaged is left out of the store), then replace the game's view; returns the view published."""
    view = registry_view(layout)
    present = {info.key for info in store.list(layout.store_key(layout.registry.versions_dir))}
    for meta in view["versions"]:
        if layout.store_key(layout.registry.meta_path(meta["version"])) not in present:
            try:
                publish_version(store, layout, meta["version"])
            except RegistryError:
                pass      # a damaged model file: `models ls` still lists it, fetching it says the store lacks it
    data = json.dumps(view, sort_keys=True).encode("utf-8")
    store.put_bytes(layout.store_key(layout.registry_view_path), data, replace=True)
    return view


def _parse_view(data: bytes, key: str, game: str) -> dict[str, Any]:
    """The view in `data`; StoreIntegrityError when it is not one of `game`."""
    try:
        view = json.loads(data)
    except ValueError:
        view = None
    if (not isinstance(view, dict) or view.get("format") != VIEW_FORMAT or view.get("game") != game
            or not isinstance(view.get("versions"), list) or not isinstance(view.get("files"), dict)):
        raise StoreIntegrityError(f"the store's {key} is not a registry view of {game} (format {VIEW_FORMAT}); it was "
                                  "changed outside zeroforge, or written by another zeroforge version")
    return view


def holds_pipeline_registry(layout: DataLayout) -> bool:
    """Whether `layout`'s game directory holds a pipeline's own registry (a best pointer and no copy of a view
    materialised from a store), which a replica's sync must never overwrite or trim."""
    return layout.registry.best_path.exists() and not layout.registry_view_path.exists()


def _replace_text(path: Path, text: str | None) -> None:
    """Make `path` hold `text` (atomically, only when it differs), or not exist when `text` is None."""
    if text is None:
        path.unlink(missing_ok=True)
        return
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except FileNotFoundError:
        pass
    write_bytes_atomic(path, data)


def materialise_view(store: ObjectStore, layout: DataLayout) -> dict[str, Any]:
    """Write the store's view of `layout`'s game into the replica at `layout.root` (module docstring); returns the
    view. StoreError when the store has no view of the game or `layout.root` is the pipeline's own data directory;
    StoreIntegrityError when the view or a record in it is damaged."""
    key = layout.store_key(layout.registry_view_path)
    try:
        data = store.get_bytes(key)
    except ObjectMissingError:
        raise StoreError(f"the store {store.url} holds no registry view of {layout.game_name} yet; the pipeline "
                         "publishes it at the start of each generation (`zeroforge run --store ...`)") from None
    view = _parse_view(data, key, layout.game_name)
    if holds_pipeline_registry(layout):
        raise StoreError(f"{layout.root} holds the pipeline's own registry of {layout.game_name}, not a replica of the "
                         "store; run the command there without --store, or give another --data-dir")
    write_bytes_atomic(layout.registry_view_path, data)      # first: marks the directory as a replica
    for meta in view["versions"]:
        try:
            name = normalise_version(meta.get("version", "") if isinstance(meta, dict) else "")
            record = version_from_meta(meta, layout.registry.meta_path(name), name)
            text = to_json_text(record.to_meta(), "meta")
        except RegistryError as exc:
            raise StoreIntegrityError(f"the store's {key} holds a damaged record: {exc}") from None
        layout.registry.version_dir(name).mkdir(parents=True, exist_ok=True)
        _replace_text(layout.registry.meta_path(name), text)
    for name, path in _view_files(layout).items():
        text = view["files"].get(name)
        if text is not None and not isinstance(text, str):
            raise StoreIntegrityError(f"the store's {key} is damaged: its {name} file is not text")
        path.parent.mkdir(parents=True, exist_ok=True)
        _replace_text(path, text)
    return view


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
        from shared.store import open_store

        store = open_store(parse_store_url(url), outage_s=30)
        publish_view(store, layout)
    except StoreError as exc:
        log.warning("could not republish the registry view of %s to the store %s (%s)", layout.game_name, url, exc)
        return False
    return True
