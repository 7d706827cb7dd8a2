"""Crash-safe file primitives for the model registry: atomic writes, checked JSON reads, hashed copies."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from shared.atomic import atomic_output


class RegistryError(ValueError):
    """A registry operation that cannot be done (unknown version, bad state, damaged file); the message says how to fix it."""


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically (see shared.atomic)."""
    with atomic_output(path) as handle:
        handle.write(data)


def to_json_text(value: Any, what: str) -> str:
    """Pretty JSON for `value`; RegistryError when it is not JSON-serialisable (names `what`)."""
    try:
        return json.dumps(value, indent=2, sort_keys=True, allow_nan=False) + "\n"
    except (TypeError, ValueError) as exc:
        raise RegistryError(f"{what} must be JSON-serialisable (plain dicts, lists, str, finite numbers): {exc}") from None


def write_json_atomic(path: Path, value: Any, what: str) -> None:
    """Atomically replace `path` with `value` as JSON."""
    write_bytes_atomic(path, to_json_text(value, what).encode("utf-8"))


def read_json_object(path: Path) -> dict[str, Any]:
    """Read a JSON object from `path`; RegistryError naming the file when it is missing, unreadable or not an object."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RegistryError(f"{path} is missing; the registry directory is incomplete or damaged") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RegistryError(f"{path} is damaged (not valid JSON: {exc}); restore it or remove that version") from None
    if not isinstance(value, dict):
        raise RegistryError(f"{path} is damaged: expected a JSON object, found {type(value).__name__}")
    return value


def append_line_atomic(path: Path, line: str) -> None:
    """Append one line to a small text file by rewriting it atomically (a crash never leaves a torn last line)."""
    try:
        old = path.read_bytes()
    except FileNotFoundError:
        old = b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    write_bytes_atomic(path, old + line.rstrip("\n").encode("utf-8") + b"\n")


def copy_with_sha256(source: Path, target: Path, chunk_bytes: int = 1 << 20) -> str:
    """Copy `source` to `target` (fsynced) and return the sha256 hex digest of the bytes written."""
    digest = hashlib.sha256()
    with open(source, "rb") as src, open(target, "wb") as dst:
        while chunk := src.read(chunk_bytes):
            digest.update(chunk)
            dst.write(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    return digest.hexdigest()


def sha256_of_file(path: Path, chunk_bytes: int = 1 << 20) -> str:
    """sha256 hex digest of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()
