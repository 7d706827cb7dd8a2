"""The store interface: create-only publication and whole-object reads of immutable objects, by key.

A key is a relative POSIX path ("games/connect4/shards/gen000003/JOB.h5"); shared.layout makes every key, as it
makes every path. Both backends (shared.store.local, shared.store.s3) keep the same guarantees:
- `put_file` / `put_bytes` publish an object once: when the key exists they change nothing and return False, so a
  retried or duplicated job never leaves two copies or replaces one; an interrupted put leaves nothing.
- `put_bytes(key, data, replace=True)` replaces a mutable object whole (the registry view, shared.store.view): a
  reader sees the old object or the new one, never a mix (an S3 PUT; temp file + rename on the local backend).
  Model files, their records and shards are never written this way.
- `get_file` writes the whole object or nothing (a temp file renamed into place).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from shared.store.errors import StoreError
from shared.store.url import StoreURL

_KEY_PART = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")


class ObjectMissingError(StoreError):
    """The key names no object in the store."""


@dataclass(frozen=True)
class ObjectInfo:
    """One stored object: its key (relative to the store's root or prefix) and size in bytes."""

    key: str
    size: int


class ObjectStore(Protocol):
    """What every backend offers (module docstring for the guarantees)."""

    url: StoreURL

    def put_file(self, key: str, source: Path) -> bool:
        """Publish the file `source` under `key` unless the key exists; True when this call created it."""

    def put_bytes(self, key: str, data: bytes, replace: bool = False) -> bool:
        """Publish `data` under `key` unless the key exists; True when this call created it. replace=True: write
        it whether or not the key exists (atomically for readers); returns True."""

    def get_file(self, key: str, dest: Path) -> None:
        """Write the object `key` to `dest` (whole or not at all); ObjectMissingError when there is none."""

    def get_bytes(self, key: str) -> bytes:
        """The bytes of object `key`; ObjectMissingError when there is none."""

    def exists(self, key: str) -> bool:
        """Whether an object `key` exists."""

    def list(self, prefix: str) -> list[ObjectInfo]:
        """The objects whose keys start with the folder `prefix` ("" for all), sorted by key."""


def check_key(key: str) -> str:
    """`key` when it is a relative POSIX path of plain names (letters, digits, '.', '_', '-'; none starting with
    '.', which the local backend keeps for its temp files); StoreError otherwise."""
    parts = key.split("/") if isinstance(key, str) else [""]
    if not key or any(not _KEY_PART.match(p) or p in (".", "..") for p in parts):
        raise StoreError(f"invalid store key {key!r}: expected a relative path of plain names")
    return key


def check_prefix(prefix: str) -> str:
    """A folder prefix for `list`: "" or a checked key, returned with one trailing slash ("" stays "")."""
    prefix = prefix.strip("/")
    return check_key(prefix) + "/" if prefix else ""
