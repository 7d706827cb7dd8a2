"""A registered model version: its meta.json record, version-name rules and status values."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from shared.layout import MODEL_FILE_NAME
from shared.registry.files import RegistryError

META_FORMAT = 1
VERSION_DIGITS = 6

CANDIDATE, PROMOTED, REJECTED, RETIRED = "candidate", "promoted", "rejected", "retired"
#: candidate: trained, not yet decided; promoted: made best (by its gate, or forced), and stays promoted when a
#: newer promotion supersedes it; rejected: lost its gate (or was rejected by hand); retired: was best and was
#: abandoned by a rollback to another version.
STATUSES = (CANDIDATE, PROMOTED, REJECTED, RETIRED)
#: Statuses of versions that were best at some time: a rollback may return to them without force.
WAS_BEST = (PROMOTED, RETIRED)
#: Statuses of versions whose generation is decided (flows.pipeline.next_generation continues after them).
DECIDED = (PROMOTED, REJECTED, RETIRED)

_VERSION_NAME = re.compile(rf"^\d{{{VERSION_DIGITS},}}$")


def is_version_name(name: str) -> bool:
    """True for directory names like '000001' (6 or more digits)."""
    return bool(_VERSION_NAME.match(name))


def normalise_version(version: str | int) -> str:
    """'7', 7 or '000007' -> '000007'; RegistryError for anything else (negative, zero, non-digits)."""
    text = str(version).strip() if not isinstance(version, bool) else ""
    if not text.isdigit() or int(text) < 1:
        raise RegistryError(f"version {version!r} is not a version number; versions look like 000001 (or just 1)")
    return f"{int(text):0{VERSION_DIGITS}d}"


@dataclass(frozen=True)
class ModelVersion:
    """One registered model. `path` is the registry's copy of the model file; `checksum` its sha256;
    `gate` the last gate result (dict from the gatekeeper, e.g. score/ci_low/ci_high/elo/promote/reason);
    `forced` True once it was made best without having passed a gate (promote/rollback with force=True)."""

    version: str
    path: Path
    status: str
    parent: str | None
    generation: int
    training: dict[str, Any]
    gate: dict[str, Any] | None
    checksum: str
    created: str
    game: str | None
    architecture: dict[str, Any] | None = None
    size_bytes: int = 0
    status_reason: str | None = None
    status_changed: str | None = None
    forced: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed_gate(self) -> bool:
        """True when the stored gate result decided to promote this version (gate["promote"] is true)."""
        return bool(self.gate and self.gate.get("promote") is True)

    def to_meta(self) -> dict[str, Any]:
        """The meta.json content (path is implied by the directory, so it is not stored)."""
        meta = asdict(self)
        meta.pop("path")
        meta.pop("extra")
        meta.update(self.extra)
        meta["format"] = META_FORMAT
        return meta

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (path as a string), e.g. for `zeroforge models ls --json`."""
        out = self.to_meta()
        out.pop("format")
        out["path"] = str(self.path)
        return out


_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "version": str, "status": str, "generation": int, "training": dict, "checksum": str, "created": str,
}
_OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "parent": str, "gate": dict, "game": str, "architecture": dict, "size_bytes": int,
    "status_reason": str, "status_changed": str,
}


def version_from_meta(meta: dict[str, Any], meta_path: Path, version_dir_name: str) -> ModelVersion:
    """Build a ModelVersion from a parsed meta.json; RegistryError naming `meta_path` for any inconsistency."""
    for key, kind in _REQUIRED.items():
        if not isinstance(meta.get(key), kind) or isinstance(meta.get(key), bool):
            raise RegistryError(f"{meta_path} is damaged: field {key!r} must be {kind.__name__}, found {meta.get(key)!r}")
    for key, kind in _OPTIONAL.items():
        if meta.get(key) is not None and (not isinstance(meta[key], kind) or isinstance(meta[key], bool)):
            raise RegistryError(f"{meta_path} is damaged: field {key!r} must be {kind.__name__} or null, found {meta[key]!r}")
    if meta["version"] != version_dir_name:
        raise RegistryError(f"{meta_path} is damaged: it says version {meta['version']!r} but lives in {version_dir_name}")
    if not isinstance(meta.get("forced", False), bool):
        raise RegistryError(f"{meta_path} is damaged: field 'forced' must be true or false, found {meta['forced']!r}")
    if meta["status"] not in STATUSES:
        raise RegistryError(f"{meta_path} is damaged: status {meta['status']!r} is not one of {STATUSES}")
    if meta.get("format", META_FORMAT) != META_FORMAT:
        raise RegistryError(f"{meta_path}: meta format {meta.get('format')!r} is not supported (expected {META_FORMAT})")
    known = set(_REQUIRED) | set(_OPTIONAL) | {"format", "forced"}
    return ModelVersion(
        version=meta["version"], path=meta_path.parent / MODEL_FILE_NAME, status=meta["status"],
        parent=meta.get("parent"), generation=meta["generation"], training=meta["training"], gate=meta.get("gate"),
        checksum=meta["checksum"], created=meta["created"], game=meta.get("game"),
        architecture=meta.get("architecture"), size_bytes=meta.get("size_bytes") or 0,
        status_reason=meta.get("status_reason"), status_changed=meta.get("status_changed"),
        forced=meta.get("forced", False), extra={k: v for k, v in meta.items() if k not in known},
    )
