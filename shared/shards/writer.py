"""Writing shards: validate self-play records, write a temp file in the target directory, publish atomically.

Readers never see a partial shard: data goes to `.<job_id>.<pid>.<random>.h5.tmp` in the SAME
directory, is flushed, closed and fsynced, and only then hard-linked to `<job_id>.h5` (a link fails
if the name exists, so a retried job can never replace or duplicate a finished shard; where the file
system has no hard links, os.replace after an existence check is used). list_shards ignores temp names.
"""
from __future__ import annotations

import logging
import numbers
import os
import re
import secrets
import socket
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from shared.atomic import fsync_dir, publish_once
from shared.shards import schema
from shared.shards.gameinfo import resign_counts
from shared.shards.schema import ShardError
from shared.shards.validate import RecordArrays, validate_records

log = logging.getLogger(__name__)

_SAFE_JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def check_job_id(job_id: str) -> str:
    """Return `job_id` if it is safe as a file name (letters, digits, '_', '.', '-'; not starting with '.'), else ShardError."""
    if not isinstance(job_id, str) or not _SAFE_JOB_ID.match(job_id) or job_id.endswith(schema.SHARD_SUFFIX):
        raise ShardError(
            f"job id {job_id!r} cannot be used as a shard name; use 1-128 characters from letters, digits, "
            "'_', '.', '-', starting with a letter or digit and not ending in '.h5'"
        )
    return job_id


def utc_now_iso() -> str:
    """The current time as ISO-8601 UTC with milliseconds, e.g. '2025-01-31T12:00:00.123+00:00'."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _check_created(value: str) -> str:
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise ShardError(f"attr 'created' must be an ISO-8601 time, got {value!r}") from None
    if stamp.utcoffset() is None or stamp.utcoffset().total_seconds() != 0:
        raise ShardError(f"attr 'created' must be in UTC (e.g. '2025-01-31T12:00:00+00:00'), got {value!r}")
    return stamp.isoformat(timespec="milliseconds")


def _normalise_attr(key: str, value: Any) -> int | str:
    expected = schema.CALLER_ATTR_TYPES[key]
    if key == "model_version" and value is None:
        return ""  # no registry model played (random or untrained evaluator)
    if expected is int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ShardError(f"attr {key!r} must be an integer, got {value!r}")
        if key != "seed" and int(value) < 0:
            raise ShardError(f"attr {key!r} must be >= 0, got {value!r}")
        return int(value)
    if not isinstance(value, str):
        raise ShardError(f"attr {key!r} must be a string, got {value!r}")
    return _check_created(value) if key == "created" else value


def build_attrs(game, job_id: str, arrays: RecordArrays, attrs: dict[str, Any]) -> dict[str, int | str]:
    """All shard attributes: the caller's (checked against schema.CALLER_ATTR_TYPES) plus the writer's own."""
    attrs = dict(attrs)
    if "job_id" in attrs:  # callers may repeat the job id; it must agree with the file name
        if attrs.pop("job_id") != job_id:
            raise ShardError(f"attrs['job_id'] disagrees with the job id {job_id!r} passed to write_shard")
    unknown = sorted(set(attrs) - set(schema.CALLER_ATTR_TYPES))
    if unknown:
        raise ShardError(f"unknown shard attrs {unknown}; allowed: {sorted(schema.CALLER_ATTR_TYPES)}")
    missing = [k for k in schema.REQUIRED_CALLER_ATTRS if k not in attrs]
    if missing:
        raise ShardError(f"missing shard attrs {missing}; required: {list(schema.REQUIRED_CALLER_ATTRS)}")
    out: dict[str, int | str] = {k: _normalise_attr(k, v) for k, v in attrs.items()}
    out.setdefault("worker_host", socket.gethostname())
    out.setdefault("created", utc_now_iso())
    out.update(
        format_version=schema.FORMAT_VERSION,
        game=schema.game_params_json(game),
        game_name=str(game.name),
        job_id=job_id,
        num_games=int(arrays.games.shape[0]),
        num_positions=int(arrays.states.shape[0]),
        **resign_counts(arrays.game_info, arrays.games["winner"]).as_dict(),
    )
    return out


def _create_dataset(h5: h5py.File, name: str, data: np.ndarray) -> None:
    row_bytes = data.dtype.itemsize * int(np.prod(data.shape[1:], dtype=np.int64))
    chunks = (schema.chunk_rows(row_bytes, data.shape[0]),) + data.shape[1:]
    h5.create_dataset(
        name,
        data=data,
        chunks=chunks,
        compression=schema.COMPRESSION,
        compression_opts=schema.COMPRESSION_OPTS,
        shuffle=schema.SHUFFLE,
        fletcher32=schema.FLETCHER32,
    )


def write_datasets(h5: h5py.File, arrays: RecordArrays, attrs: dict[str, int | str]) -> None:
    """Write the datasets of the current format version and all attributes into an open, empty HDF5 file."""
    for name in (*schema.DATASET_DTYPES, *schema.VERSION2_DATASET_DTYPES):
        _create_dataset(h5, name, getattr(arrays, name))
    if arrays.ownership is not None:
        _create_dataset(h5, schema.OWNERSHIP, arrays.ownership)
    for key, value in attrs.items():
        h5.attrs[key] = value


def _write_temp_file(tmp: Path, arrays: RecordArrays, attrs: dict[str, int | str]) -> None:
    with h5py.File(tmp, "w", libver="latest") as h5:
        write_datasets(h5, arrays, attrs)
        h5.flush()
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_shard(directory: Path, job_id: str, game, records, attrs: dict[str, Any]) -> Path:
    """Validate `records` (a SelfPlayRecords or any object with its fields) and write `<directory>/<job_id>.h5` atomically.

    attrs: generation, model_version (str or None), seed, simulations; optional worker_host, created,
    job_id (must equal `job_id`).
    Returns the shard path. If `<job_id>.h5` already exists (a retried job) it is kept and returned
    unchanged. ShardError for bad records, attrs or job id (nothing is written) and for I/O failures.
    """
    job_id = check_job_id(job_id)
    directory = Path(directory)
    final = directory / schema.shard_file_name(job_id)
    if final.exists():
        log.info("shard %s already exists (retried job); keeping it", final)
        return final
    arrays = validate_records(game, records)
    all_attrs = build_attrs(game, job_id, arrays, attrs)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ShardError(f"cannot create shard directory {directory}: {exc}") from exc
    tmp = directory / f".{job_id}.{os.getpid()}.{secrets.token_hex(4)}{schema.TEMP_SUFFIX}"
    try:
        _write_temp_file(tmp, arrays, all_attrs)
        published = publish_once(tmp, final)
    except OSError as exc:
        raise ShardError(f"writing shard {final} failed: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(directory)
    if not published:
        log.info("shard %s appeared while writing (concurrent retry); kept the existing file", final)
    return final


def remove_stale_temp_files(directory: Path, older_than_s: float = 3600.0) -> list[Path]:
    """Delete temp files left by crashed writers (`.*.h5.tmp` older than `older_than_s`) in `directory`; returns them."""
    removed = []
    cutoff = time.time() - older_than_s
    for path in Path(directory).glob(f".*{schema.TEMP_SUFFIX}"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed.append(path)
        except FileNotFoundError:
            continue
    return removed
