"""Building blocks shared by every config section: the frozen base model and reusable field types.

Every section is a frozen pydantic model that rejects unknown keys, so a typo in a TOML file, an
environment variable or a `--set` flag fails at start instead of being silently ignored.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationInfo, field_validator

#: Strings that mean "no value" for optional fields (useful in environment variables and `--set`,
#: which cannot express TOML's absence of a key).
NONE_STRINGS = frozenset({"none", "null", ""})

_DEVICE_PATTERN = re.compile(r"^(cpu|cuda(:[0-9]{1,3})?)$")
_QUEUE_PATTERN = re.compile(r"^[A-Za-z0-9_.\-]+$")
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class Section(BaseModel):
    """Base of every config section and service config: immutable, unknown keys rejected, no NaN or infinity,
    and true/false accepted only by yes/no fields (pydantic would read `simulations = true` as 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _booleans_only_for_flags(cls, value: Any, info: ValidationInfo) -> Any:
        annotation = cls.model_fields[info.field_name].annotation
        if isinstance(value, bool) and annotation is not bool:
            kind = "a number" if _mentions(annotation, (int, float)) else "text"
            raise ValueError(f"must be {kind}, not {str(value).lower()}")
        return value


def _mentions(annotation: Any, types: tuple[type, ...]) -> bool:
    """True when `annotation` is one of `types` or a union / Annotated that contains one."""
    if annotation in types:
        return True
    return any(_mentions(arg, types) for arg in get_args(annotation))


def _none_from_string(value: Any) -> Any:
    """Map "none"/"null"/"" (any case, as given by env vars and --set) to None; pass anything else through."""
    if isinstance(value, str) and value.strip().lower() in NONE_STRINGS:
        return None
    return value


def _check_device(value: str) -> str:
    value = value.strip().lower()
    if not _DEVICE_PATTERN.match(value):
        raise ValueError("device must be 'cpu', 'cuda' or 'cuda:N' (e.g. 'cuda:0')")
    return value


def _check_redis_url(value: str | None) -> str | None:
    if value is not None and not value.startswith(_REDIS_SCHEMES):
        raise ValueError(
            f"redis_url must start with one of {', '.join(_REDIS_SCHEMES)} "
            "(e.g. redis://127.0.0.1:6379/0)"
        )
    return value


def _check_store_url(value: str | None) -> str | None:
    from shared.store.url import parse_store_url

    if value is None:
        return None
    try:
        return str(parse_store_url(value))
    except ValueError as exc:     # StoreError: says what is wrong and the accepted forms
        raise ValueError(str(exc)) from None


def _plies_from_text(value: Any) -> Any:
    """Opening lengths as given: "none" -> None, "6-8" -> [6, 7, 8], "6,8" -> [6, 8]; lists pass through."""
    value = _none_from_string(value)
    if not isinstance(value, str):
        return value
    text = value.replace(" ", "")
    low, dash, high = text.partition("-")
    if dash and low.isdigit() and high.isdigit():
        if int(low) > int(high):
            raise ValueError(f"'{value}' is an empty range; write it low-high, e.g. 6-8")
        return list(range(int(low), int(high) + 1))
    parts = text.split(",")
    if not all(part.isdigit() for part in parts):
        raise ValueError(f"'{value}' is not a list of ply counts; write e.g. 6-8, 6,7,8 or none")
    return [int(part) for part in parts]


def _check_plies(value: tuple[int, ...] | None) -> tuple[int, ...] | None:
    if value is None:
        return None
    if not value or not all(1 <= plies <= 1000 for plies in value):
        raise ValueError(f"opening lengths must be 1 to 1000 plies (got {list(value)})")
    return tuple(sorted(set(value)))


def parse_plies(value: Any) -> tuple[int, ...] | None:
    """Opening lengths from text or a list ("6-8", "6,7,8", [6, 7, 8], "none"): a sorted tuple of distinct ply
    counts from 1 to 1000, or None; ValueError saying what is wrong otherwise."""
    return _check_plies(_plies_from_text(value))


def _expand_path(value: Path | None) -> Path | None:
    return None if value is None else value.expanduser()


#: "cpu", "cuda" or "cuda:N" (availability is checked by the process that uses it, not here).
Device = Annotated[str, AfterValidator(_check_device)]
#: An rq queue name.
#: An optional Redis URL (redis://, rediss:// or unix://).
RedisUrl = Annotated[str | None, BeforeValidator(_none_from_string), AfterValidator(_check_redis_url)]
#: An optional object store URL (s3://BUCKET/PREFIX or a local directory), normalised.
StoreUrl = Annotated[str | None, BeforeValidator(_none_from_string), AfterValidator(_check_store_url)]
#: An optional filesystem path; "~" is expanded.
OptionalPath = Annotated[Path | None, BeforeValidator(_none_from_string), AfterValidator(_expand_path)]

#: Optional opening lengths in plies: "6-8", "6,7,8", a TOML list, or "none"; stored sorted without repeats.
OptionalPlies = Annotated[tuple[int, ...] | None, BeforeValidator(_plies_from_text), AfterValidator(_check_plies)]

#: Optional numbers that also accept the strings "none"/"null"/"" as None (for env vars and --set).
OptionalInt = Annotated[int | None, BeforeValidator(_none_from_string)]
OptionalFloat = Annotated[float | None, BeforeValidator(_none_from_string)]
OptionalStr = Annotated[str | None, BeforeValidator(_none_from_string)]
