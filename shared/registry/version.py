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

CANDIDATE, PROMOTED, REJECTED = "candidate", "promoted", "rejected"
#: candidate: trained, not yet gated; promoted: was best at some time (stays so after being superseded);
#: rejected: lost its gate (or was rejected by hand).
STATUSES = (CANDIDATE, PROMOTED, REJECTED)

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
    `gate` the last gate result (dict from the gatekeeper, e.g. score/ci_low/ci_high/elo/promote/reason)."""

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
    extra: dict[str, Any] = field(default_factory=dict)

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
    if meta["status"] not in STATUSES:
        raise RegistryError(f"{meta_path} is damaged: status {meta['status']!r} is not one of {STATUSES}")
    if meta.get("format", META_FORMAT) != META_FORMAT:
        raise RegistryError(f"{meta_path}: meta format {meta.get('format')!r} is not supported (expected {META_FORMAT})")
    known = set(_REQUIRED) | set(_OPTIONAL) | {"format"}
    return ModelVersion(
        version=meta["version"], path=meta_path.parent / MODEL_FILE_NAME, status=meta["status"],
        parent=meta.get("parent"), generation=meta["generation"], training=meta["training"], gate=meta.get("gate"),
        checksum=meta["checksum"], created=meta["created"], game=meta.get("game"),
        architecture=meta.get("architecture"), size_bytes=meta.get("size_bytes") or 0,
        status_reason=meta.get("status_reason"), status_changed=meta.get("status_changed"),
        extra={k: v for k, v in meta.items() if k not in known},
    )
