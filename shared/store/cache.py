"""A size bound on a replica of the data directory kept by a host with only the store (cli.store_replica): its
immutable objects, shards and model files, are evicted least recently used first until they fit.

Shards go first (the oldest access first: the later of a file's access and modification times), then the model
files of versions other than the replica's best; the best model, the records and the registry view stay. An evicted
object is fetched again (and checked again) by the next command that needs it. A pipeline's own data directory is
never trimmed.
"""
from __future__ import annotations

from pathlib import Path

from shared.layout import DataLayout, games_in_data_root
from shared.registry import ModelRegistry, RegistryError
from shared.store.view import holds_pipeline_registry


def _last_use(path: Path) -> float:
    stat = path.stat()
    return max(stat.st_atime, stat.st_mtime)


def _evictable(root: Path) -> list[Path]:
    """The replica's shards, oldest use first, then its model files other than each game's best, oldest use first."""
    shards, models = [], []
    for game in games_in_data_root(root):
        layout = DataLayout(root, game)
        if layout.shards_dir.is_dir():
            shards += list(layout.shards_dir.rglob("*.h5"))
        try:
            best = ModelRegistry(layout.registry_dir).best_version()
        except RegistryError:
            best = None
        keep = layout.registry.model_path(best) if best else None
        if layout.registry.versions_dir.is_dir():
            models += [p for p in layout.registry.versions_dir.glob("*/model.pt") if p != keep]
    return sorted(shards, key=_last_use) + sorted(models, key=_last_use)


def trim_replica(root: Path, limit_bytes: int) -> list[Path]:
    """Delete shards, then model files (module docstring), least recently used first, until the replica's shards
    and model files together take at most `limit_bytes`; returns the files deleted, in order. A root that holds a
    pipeline's own registry is no replica: nothing is deleted there."""
    if any(holds_pipeline_registry(DataLayout(Path(root), game)) for game in games_in_data_root(Path(root))):
        return []
    files = _evictable(Path(root))
    sizes = {path: path.stat().st_size for path in files}
    total = sum(sizes.values())
    best_models = [p for game in games_in_data_root(Path(root))
                   for p in DataLayout(Path(root), game).registry.versions_dir.glob("*/model.pt") if p not in sizes]
    total += sum(p.stat().st_size for p in best_models)
    evicted = []
    for path in files:
        if total <= limit_bytes:
            break
        path.unlink(missing_ok=True)
        total -= sizes[path]
        evicted.append(path)
    return evicted
