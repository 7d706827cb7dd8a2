"""A bounded local cache of immutable store objects, so a host downloads each shard and each model once.

Cached files live under the cache root at their keys. A file is used as it is once cached: objects are immutable,
and those with a recorded sha256 (model files) are checked when they are downloaded, before they enter the cache.
When the cache holds more than `max_bytes`, the least recently used files go (modification time, refreshed on
every hit), never the one just asked for. Processes of one host may share a cache: downloads go to temp files
renamed into place, so a reader sees a whole file or none.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from shared.atomic import temp_path_for
from shared.store.base import ObjectStore, check_key
from shared.store.errors import StoreIntegrityError


def sha256_of(path: Path, chunk_bytes: int = 1 << 20) -> str:
    """The sha256 hex digest of the file at `path`."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()


class ObjectCache:
    """Objects of `store` cached under `root`, at most about `max_bytes` in all."""

    def __init__(self, store: ObjectStore, root: Path, max_bytes: int = 2 << 30) -> None:
        self.store, self.root, self.max_bytes = store, Path(root), int(max_bytes)
        self.downloads = 0    # objects fetched from the store by this cache (tests and reports)

    def fetch(self, key: str, sha256: str | None = None) -> Path:
        """The local path of object `key`, downloaded on first use. With `sha256`, a download whose digest
        differs raises StoreIntegrityError (the object changed behind zeroforge's back) and is not kept.
        ObjectMissingError when the store has no such object."""
        path = self.root / check_key(key)
        if path.is_file():
            os.utime(path)
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = temp_path_for(path)
        try:
            self.store.get_file(key, tmp)
            if sha256 is not None:
                actual = sha256_of(tmp)
                if actual != sha256:
                    raise StoreIntegrityError(
                        f"the store's {key} is not the object zeroforge recorded (sha256 {actual[:12]}... instead of "
                        f"{sha256[:12]}...): it was changed outside zeroforge; restore it or roll back to another "
                        "version")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        self.downloads += 1
        self._evict(keep=path)
        return path

    def _evict(self, keep: Path) -> None:
        files = []
        for entry in self.root.rglob("*"):
            if entry.is_file() and not entry.name.startswith("."):
                try:
                    stat = entry.stat()
                except FileNotFoundError:    # another process evicted it meanwhile
                    continue
                files.append((stat.st_mtime, stat.st_size, entry))
        total = sum(size for _, size, _ in files)
        for _, size, entry in sorted(files, key=lambda item: item[0]):
            if total <= self.max_bytes:
                break
            if entry != keep:
                entry.unlink(missing_ok=True)
                total -= size
