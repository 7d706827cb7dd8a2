"""ModelRegistry: numbered model versions, a `best` pointer and an append-only history, safe across processes.

Directory (one per game, DataLayout(root, game).registry_dir):

    versions/000001/model.pt     the registered copy of the model file (never modified)
    versions/000001/meta.json    ModelVersion record (status, parent, generation, training, gate, checksum, ...)
    best.json                    {"version", "since", "event", "reason", "by"}: the model self-play uses
    history.jsonl                one JSON object per promotion, rejection or rollback (who: "by"; why: "reason")
    registry.lock                filelock held around every read-modify-write

A version directory is assembled under a hidden staging name and renamed into place, so a version
either exists completely or not at all. Every file write is temp file + fsync + os.replace. Version
numbers are allocated under the lock, so concurrent registrations get distinct versions.
Status changes write meta.json, then best.json, then history.jsonl.

Statuses (shared.registry.version): candidate -> promoted (by its gate, or forced) or rejected; a promoted
version that a rollback abandons becomes retired, one superseded by a newer promotion stays promoted.
"""
from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from shared.atomic import fsync_dir
from shared.layout import META_FILE_NAME, MODEL_FILE_NAME, RegistryLayout
from shared.registry.actor import resolve_actor
from shared.registry.files import (
    RegistryError, append_line_atomic, copy_with_sha256, read_json_object, sha256_of_file, to_json_text,
    write_json_atomic,
)
from shared.registry.modelinfo import describe_model_file
from shared.registry.version import (
    CANDIDATE, PROMOTED, REJECTED, RETIRED, WAS_BEST, ModelVersion, is_version_name, normalise_version,
    version_from_meta,
)

log = logging.getLogger(__name__)


#: promote(expected_best=ANY_BEST): promote whatever the current best is.
ANY_BEST = object()


class BestChangedError(RegistryError):
    """A compare-and-swap promotion found another best than the one the candidate was gated against."""


def utc_now() -> str:
    """Current time, ISO-8601 UTC with milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class ModelRegistry:
    """Versioned model store for one game (see the module docstring for the directory layout)."""

    def __init__(self, directory: Path, game_name: str | None = None, lock_timeout_s: float = 60.0):
        """directory: the registry directory (created on first write). game_name: when given, register()
        refuses model files of other games."""
        self.paths = RegistryLayout(directory)
        self.directory = self.paths.directory
        self.game_name = game_name
        self.versions_dir = self.paths.versions_dir
        self.best_path = self.paths.best_path
        self.history_path = self.paths.history_path
        self._lock = FileLock(str(self.paths.lock_path), timeout=lock_timeout_s)

    # ----- reading (no lock needed: every file is replaced atomically) -------------------------
    def _version_names(self) -> list[str]:
        if not self.versions_dir.is_dir():
            return []
        return sorted((p.name for p in self.versions_dir.iterdir() if is_version_name(p.name)), key=int)

    def get(self, version: str | int) -> ModelVersion:
        """The record of `version` ('000003', '3' or 3); RegistryError if unknown or its meta.json is damaged."""
        name = normalise_version(version)
        if not self.paths.version_dir(name).is_dir():
            known = self._version_names()
            hint = f"known versions: {known[0]}..{known[-1]}" if known else "the registry is empty"
            raise RegistryError(f"unknown model version {name} in {self.directory} ({hint}); see `zeroforge models ls`")
        meta_path = self.paths.meta_path(name)
        return version_from_meta(read_json_object(meta_path), meta_path, name)

    def list(self) -> list[ModelVersion]:
        """All versions, oldest first; RegistryError naming the file if any meta.json is damaged."""
        return [self.get(name) for name in self._version_names()]

    def scan(self) -> tuple[list[ModelVersion], list[str]]:
        """(readable versions oldest first, one problem line per damaged version): `list` that skips damage."""
        records, problems = [], []
        for name in self._version_names():
            try:
                records.append(self.get(name))
            except RegistryError as exc:
                problems.append(str(exc))
        return records, problems

    def best_version(self) -> str | None:
        """The version `best.json` points at, or None before the first promotion."""
        if not self.best_path.exists():
            return None
        pointer = read_json_object(self.best_path)
        version = pointer.get("version")
        if not isinstance(version, str) or not is_version_name(version):
            raise RegistryError(f"{self.best_path} is damaged: 'version' is {version!r}; fix it with `zeroforge models rollback V --force`")
        return version

    def best(self) -> ModelVersion | None:
        """The current best model (the one self-play uses), or None before the first promotion."""
        version = self.best_version()
        return self.get(version) if version else None

    def history(self) -> list[dict[str, Any]]:
        """Promotions, rejections and rollbacks, oldest first: {"time", "event", "version", "previous_best", "reason",
        "by", ...} ("forced": true when force was needed; "retired": the version a rollback abandoned). Entries
        written before `by` was recorded have no "by"."""
        if not self.history_path.exists():
            return []
        try:
            text = self.history_path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise RegistryError(f"{self.history_path} is damaged: not UTF-8 text (byte {exc.start}); "
                                "move it aside to start a new history") from None
        except OSError as exc:
            raise RegistryError(f"cannot read {self.history_path}: {exc.strerror or exc}") from None
        entries = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except (ValueError, RecursionError) as exc:
                raise RegistryError(f"{self.history_path} line {number} is damaged ({exc})") from None
            if not isinstance(entry, dict) or "event" not in entry or "version" not in entry:
                raise RegistryError(f"{self.history_path} line {number} is not a history entry: {line[:80]!r}")
            entries.append(entry)
        return entries

    def verify(self, version: str | int) -> ModelVersion:
        """Recompute the model file's sha256; RegistryError when it no longer matches the registered checksum."""
        record = self.get(version)
        try:
            actual = sha256_of_file(record.path)
        except OSError as exc:
            raise RegistryError(f"cannot read {record.path}: {exc}") from None
        if actual != record.checksum:
            raise RegistryError(f"{record.path} is damaged: sha256 {actual[:12]}... differs from the registered {record.checksum[:12]}...")
        return record

    # ----- writing -------------------------------------------------------------------------------
    def _acquire(self):
        """Take the registry lock; use as `with self._acquire():` (the returned proxy releases it on exit)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            return self._lock.acquire()
        except Timeout:
            raise RegistryError(
                f"{self._lock.lock_file} is held by another process for too long; retry, or remove it if no zeroforge process runs"
            ) from None

    def _next_version(self) -> str:
        names = self._version_names()
        return normalise_version(int(names[-1]) + 1 if names else 1)

    def _write_meta(self, record: ModelVersion) -> None:
        write_json_atomic(self.paths.meta_path(record.version), record.to_meta(), f"meta of version {record.version}")

    def _check_register_args(self, model_file: Path, parent: str | None, generation: int,
                             training: dict[str, Any]) -> str | None:
        if not model_file.is_file():
            raise RegistryError(f"model file {model_file} does not exist; save the model first (shared/network/modelfile.save_model)")
        if isinstance(generation, bool) or not isinstance(generation, int) or generation < 0:
            raise RegistryError(f"generation must be an integer >= 0, got {generation!r}")
        to_json_text(training, "training")
        if parent is None:
            return None
        return self.get(parent).version  # RegistryError for an unknown parent

    def _stage_copy(self, model_file: Path) -> tuple[Path, str]:
        self.versions_dir.mkdir(parents=True, exist_ok=True)
        staging = self.paths.staging_dir(f"{os.getpid()}-{secrets.token_hex(4)}")
        staging.mkdir()
        try:
            checksum = copy_with_sha256(model_file, staging / MODEL_FILE_NAME)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise RegistryError(f"cannot copy {model_file} into the registry: {exc}") from None
        return staging, checksum

    def register(self, model_file: Path, *, parent: str | None = None, generation: int,
                 training: dict[str, Any] | None = None, game: str | None = None,
                 architecture: dict[str, Any] | None = None, once: bool = False) -> ModelVersion:
        """Copy `model_file` in as the next version, a candidate, and return its record (`promote` makes it best).

        game/architecture come from the model file's metadata (shared.network.modelfile.model_file_info)
        when that module is importable; the arguments are used otherwise. RegistryError for a missing or
        damaged model file, an unknown parent, a game other than the registry's, or bad arguments.
        once=True: if a version of the same generation trained from the same parent exists already (two runs of
        one training job: a worker thought dead that was not), return it and register nothing; the check
        and the registration happen under the registry lock.
        """
        model_file, training = Path(model_file), dict(training or {})
        parent = self._check_register_args(model_file, parent, generation, training)
        game, architecture = describe_model_file(model_file, game, architecture)
        if self.game_name and game and game != self.game_name:
            raise RegistryError(f"model file {model_file} is for game {game!r}, but this registry holds {self.game_name!r} models")
        staging, checksum = self._stage_copy(model_file)
        try:
            with self._acquire():
                if once:
                    for existing in self.list():
                        if existing.generation == generation and existing.parent == parent and parent is not None:
                            log.info("version %s of generation %d from %s exists; not registering another",
                                     existing.version, generation, parent)
                            return existing
                record = ModelVersion(
                    version=self._next_version(), path=Path(), status=CANDIDATE, parent=parent, generation=generation,
                    training=training, gate=None, checksum=checksum, created=utc_now(), game=game,
                    architecture=architecture, size_bytes=(staging / MODEL_FILE_NAME).stat().st_size,
                )
                write_json_atomic(staging / META_FILE_NAME, record.to_meta(), "meta")
                os.rename(staging, self.paths.version_dir(record.version))  # the version appears complete, or not at all
                fsync_dir(self.versions_dir)
                record = self.get(record.version)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        log.info("registered model %s (generation %d, parent %s) in %s", record.version, generation, parent, self.directory)
        return record

    def adopt(self, meta: dict[str, Any], model_file: Path) -> ModelVersion:
        """Install a version of another registry of the same deployment under its own number (a worker's replica
        of the pipeline's registry, shared.store.replica): `meta` is that version's meta.json object, `model_file`
        its model. Returns the record; an existing version of that number is returned as it is. RegistryError when
        the file's sha256 is not the record's checksum or the record is damaged. Writes no history entry: nothing
        happened to the model in this registry."""
        name = normalise_version(meta.get("version", ""))
        record = version_from_meta(dict(meta), self.paths.meta_path(name), name)   # RegistryError when damaged
        if self.paths.version_dir(name).is_dir():
            return self.get(name)
        staging, checksum = self._stage_copy(Path(model_file))
        try:
            if checksum != record.checksum:
                raise RegistryError(f"model file of version {name} does not match its record (sha256 {checksum[:12]}... "
                                    f"instead of {record.checksum[:12]}...)")
            write_json_atomic(staging / META_FILE_NAME, record.to_meta(), "meta")
            with self._acquire():
                if not self.paths.version_dir(name).is_dir():
                    os.rename(staging, self.paths.version_dir(name))
                    fsync_dir(self.versions_dir)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return self.get(name)

    def set_gate_result(self, version: str | int, gate: dict[str, Any]) -> ModelVersion:
        """Store the gate result (any JSON object, e.g. the gatekeeper's score/CI/Elo/promote/reason) on `version`."""
        if not isinstance(gate, dict):
            raise RegistryError(f"gate result must be a dict, got {type(gate).__name__}")
        to_json_text(gate, "gate result")
        with self._acquire():
            record = self.get(version)
            updated = _replace(record, gate=gate)
            self._write_meta(updated)
        return updated

    def _append_history(self, event: str, version: str, previous: str | None, reason: str, by: str,
                        **more: Any) -> dict[str, Any]:
        entry = {"time": utc_now(), "event": event, "version": version, "previous_best": previous, "reason": reason,
                 "by": by, **more}
        append_line_atomic(self.history_path, json.dumps(entry, sort_keys=True))
        return entry

    def _current_best(self, tolerate_damage: bool) -> str | None:
        """best_version(), or None for a damaged best.json when `tolerate_damage` (a forced rollback repairs it)."""
        try:
            return self.best_version()
        except RegistryError:
            if tolerate_damage:
                return None
            raise

    def _retire(self, abandoned: str | None, target: str, reason: str, now: str) -> str | None:
        """Mark `abandoned` (the best a rollback to `target` leaves) retired (lock held); returns its version, or
        None when nothing is retired (no best, best is `target`, or its record is unreadable or not promoted)."""
        if abandoned is None or abandoned == target:
            return None
        try:
            record = self.get(abandoned)
        except RegistryError as exc:   # a forced rollback away from a damaged version still repairs best.json
            log.warning("version %s is left as it is (not retired): %s", abandoned, exc)
            return None
        if record.status != PROMOTED:
            return None
        self._write_meta(_replace(record, status=RETIRED, status_reason=f"rolled back to {target}: {reason}",
                                  status_changed=now))
        return record.version

    def _move_best(self, record: ModelVersion, event: str, reason: str, *, forced: bool, by: str,
                   retire_previous: bool) -> dict[str, Any]:
        """Make `record` best (lock held): its meta.json (status promoted, `forced` kept once set), then the
        abandoned best's meta.json (retired) when `retire_previous`, then best.json, then history. In that order
        the same call, run again after a crash, completes the change (its history event then lacks "forced",
        which the version's meta.json already has)."""
        previous = self._current_best(tolerate_damage=True)
        now = utc_now()
        if record.status != PROMOTED:
            self._write_meta(_replace(record, status=PROMOTED, status_reason=reason, status_changed=now,
                                      forced=record.forced or forced))
        retired = self._retire(previous, record.version, reason, now) if retire_previous else None
        write_json_atomic(self.best_path, {"version": record.version, "since": now, "event": event, "reason": reason,
                                           "by": by}, "best")
        extra = {**({"forced": True} if forced else {}), **({"retired": retired} if retired else {})}
        return self._append_history(event, record.version, previous, reason, by, **extra)

    def promote(self, version: str | int, reason: str, *, force: bool = False,
                expected_best: str | None | object = ANY_BEST, by: str | None = None) -> dict[str, Any] | None:
        """Make `version` the best model: THE promotion of zeroforge (the gate's decision, the initial model and
        `zeroforge models promote` all call it). The version that was best stays `promoted`.

        A version that never passed a gate needs force=True, and is then recorded as forced (`forced: true`
        in its meta.json and in the history event): a rejected one, or a candidate whose gate result does not
        say promote while a best exists (the first model of a registry has nothing to be gated against).
        expected_best: compare-and-swap; when given (a version, or None for "no best yet"), promote only if
        best still is that version, else BestChangedError (nothing changes). by: who promotes, recorded in the
        history (None: "<user>@<host>"; the gate passes "gate"). Returns the history entry, or None when
        `version` already is best (nothing changes, so retried flows are harmless).
        A version that was best before (promoted or retired) or is an ancestor of the best is refused with a
        RegistryError, force or not: going back to it is a rollback (`rollback`, which retires the best).
        """
        actor = resolve_actor(by)
        with self._acquire():
            record = self.get(version)
            current = self.best_version()
            if current == record.version:
                return None
            if expected_best is not ANY_BEST and current != expected_best:
                raise BestChangedError(
                    f"best changed from {expected_best or 'none'} to {current or 'none'} while {record.version} "
                    "was evaluated against it; not promoted"
                )
            backwards = self._going_back(record, current)
            if backwards:
                raise RegistryError(f"version {record.version} {backwards}, so making it best again is a rollback: "
                                    f"run `zeroforge models rollback {record.version}` (or the UI's rollback "
                                    f"deployment), which records it as one and retires {current}")
            ungated = _why_ungated(record, current)
            if ungated and not force:
                raise RegistryError(f"version {record.version} {ungated}; promote it with --force if you mean it "
                                    "(it is then recorded as forced)")
            return self._move_best(record, "promote", reason, forced=ungated is not None, by=actor,
                                   retire_previous=False)

    def _going_back(self, record: ModelVersion, best: str | None) -> str | None:
        """Why making `record` best would go back rather than forward (it was best before, or the best `best` was
        trained from it), None when it would not; `record` is not `best`."""
        if best is None:
            return None
        if record.status in WAS_BEST:
            return f"was best before (status {record.status}; the best now is {best})"
        version, seen = best, set()
        while version is not None and version not in seen:   # up the lineage; a damaged record ends it
            seen.add(version)
            try:
                version = self.get(version).parent
            except RegistryError:
                return None
            if version == record.version:
                return f"is an ancestor of the best {best}"
        return None

    def reject(self, version: str | int, reason: str, *, force: bool = False,
               by: str | None = None) -> dict[str, Any] | None:
        """Mark a candidate rejected. The current best cannot be rejected (roll back first); a version that was
        best before (promoted or retired) needs force=True. by: as for promote. Returns the history entry, or None
        if it already was rejected."""
        actor = resolve_actor(by)
        with self._acquire():
            record = self.get(version)
            if record.status == REJECTED:
                return None
            if self.best_version() == record.version:
                raise RegistryError(f"version {record.version} is the current best; roll back to another version before rejecting it")
            if record.status in WAS_BEST and not force:
                raise RegistryError(f"version {record.version} was promoted before (status {record.status}); "
                                    "reject it with --force if you mean it")
            self._write_meta(_replace(record, status=REJECTED, status_reason=reason, status_changed=utc_now()))
            extra = {"forced": True} if record.status in WAS_BEST else {}
            return self._append_history("reject", record.version, self.best_version(), reason, actor, **extra)

    def rollback(self, version: str | int, reason: str, *, force: bool = False,
                 by: str | None = None) -> dict[str, Any] | None:
        """Point best back at `version`, which must have been best before (status promoted or retired; any version
        with force=True, then recorded as forced). The version that was best becomes `retired`, its status_reason
        "rolled back to <version>: <reason>". The next generation's self-play uses `version`. by: as for promote.
        Returns the history entry (with "retired": the abandoned version), or None if it already is best."""
        actor = resolve_actor(by)
        with self._acquire():
            record = self.get(version)
            if self._current_best(tolerate_damage=force) == record.version:
                return None
            never_best = record.status not in WAS_BEST
            if never_best and not force:
                raise RegistryError(
                    f"version {record.version} was never promoted (status {record.status}); roll back only to a "
                    "previously promoted version, or pass --force"
                )
            return self._move_best(record, "rollback", reason, forced=never_best, by=actor, retire_previous=True)


def _why_ungated(record: ModelVersion, best: str | None) -> str | None:
    """Why promoting `record` needs force ('was rejected (...)', 'never passed a gate (...)'), None when it may
    be promoted: it passed its gate, was best before (promoted/retired), or is a candidate while there is no best."""
    if record.status == REJECTED:
        return f"was rejected ({record.status_reason or 'no reason recorded'})"
    if record.status == CANDIDATE and not record.passed_gate and best is not None:
        decision = "none" if not record.gate else f"promote={record.gate.get('promote')!r}"
        return f"never passed a gate (status candidate, gate result: {decision})"
    return None


def _replace(record: ModelVersion, **changes: Any) -> ModelVersion:
    return replace(record, **changes)
