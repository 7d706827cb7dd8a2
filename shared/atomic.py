"""Crash-safe file writes: a reader sees the old file or the complete new one, never half a file.

Every durable artefact (model files, registry records, trainer checkpoints, plots) is written through
`atomic_output`: a hidden temp file in the same directory, flushed and fsynced, then `os.replace`d onto
the final name, and the directory entry fsynced.  Files that must never replace an existing one (HDF5 shards, objects of the local
store, shards fetched from a store) are written to a temp file and given their name by `publish_once`.
"""
from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable; silently skipped where directories cannot be opened or synced."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def publish_once(tmp: Path, final: Path) -> bool:
    """Give the complete file `tmp` the name `final` unless `final` exists, never replacing it: True when this call
    published it. A hard link (create-only and atomic) where the file system has them; elsewhere a check, then a
    replace (a writer racing in that window publishes the same content, by the callers' contract). The caller
    removes `tmp` afterwards (missing_ok) and fsyncs the directory."""
    try:
        os.link(tmp, final)
    except FileExistsError:
        return False
    except OSError:
        if final.exists():
            return False
        os.replace(tmp, final)
    return True


def temp_path_for(path: Path) -> Path:
    """A unique hidden temp name next to `path` (same directory, so os.replace is atomic)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[BinaryIO]:
    """Yield a binary handle; on a clean exit its bytes replace `path` atomically, on an error `path` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(path)
    try:
        with open(tmp, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
