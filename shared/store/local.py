"""The local-directory backend: objects are files under a root directory (the data directory on one machine).

Create-only publication writes a complete temp file and gives it the key's path with shared.atomic.publish_once,
so a reader never sees a partial object and an existing one is never replaced.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from shared.atomic import atomic_output, fsync_dir, publish_once, temp_path_for
from shared.store.base import ObjectInfo, ObjectMissingError, check_key, check_prefix
from shared.store.errors import StoreError
from shared.store.url import StoreURL


class LocalObjectStore:
    """Objects as files under `url.path` (created on first write)."""

    def __init__(self, url: StoreURL) -> None:
        if url.kind != "local" or url.path is None:
            raise StoreError(f"{url} is not a local store URL")
        self.url = url
        self.root = url.path

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def _publish(self, key: str, write) -> bool:
        target = self._path(key)
        if target.exists():
            return False
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot write to the store directory {self.root} ({exc.strerror}); check --store")
        tmp = temp_path_for(target)
        try:
            with open(tmp, "wb") as handle:
                write(handle)
                handle.flush()
                os.fsync(handle.fileno())
            published = publish_once(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        fsync_dir(target.parent)
        return published

    def put_file(self, key: str, source: Path) -> bool:
        """Publish the file `source` under `key` unless the key exists; True when this call created it."""
        with open(source, "rb") as src:
            return self._publish(key, lambda handle: shutil.copyfileobj(src, handle, 1 << 20))

    def put_bytes(self, key: str, data: bytes, replace: bool = False) -> bool:
        """Publish `data` under `key` unless the key exists; True when this call created it. replace=True: replace
        the object whole (temp file + rename: readers see the old bytes or the new ones); returns True."""
        if not replace:
            return self._publish(key, lambda handle: handle.write(data))
        target = self._path(key)
        try:
            with atomic_output(target) as handle:
                handle.write(data)
        except OSError as exc:
            raise StoreError(f"cannot write to the store directory {self.root} ({exc.strerror}); check --store")
        return True

    def get_file(self, key: str, dest: Path) -> None:
        """Copy the object `key` to `dest` atomically; ObjectMissingError when there is none."""
        path = self._path(key)
        try:
            with open(path, "rb") as src, atomic_output(dest) as out:
                shutil.copyfileobj(src, out, 1 << 20)
        except FileNotFoundError:
            raise ObjectMissingError(f"no object {key} in the store {self.url}") from None

    def get_bytes(self, key: str) -> bytes:
        """The bytes of object `key`; ObjectMissingError when there is none."""
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise ObjectMissingError(f"no object {key} in the store {self.url}") from None

    def exists(self, key: str) -> bool:
        """Whether an object `key` exists."""
        return self._path(key).is_file()

    def list(self, prefix: str) -> list[ObjectInfo]:
        """The objects under the folder `prefix` ("" for all), sorted by key; temp files of puts in flight are
        not objects."""
        base = self.root / check_prefix(prefix) if prefix.strip("/") else self.root
        if not base.is_dir():
            return []
        found = []
        for path in base.rglob("*"):
            if path.is_file() and not path.name.startswith("."):
                found.append(ObjectInfo(path.relative_to(self.root).as_posix(), path.stat().st_size))
        return sorted(found, key=lambda info: info.key)
