"""Who changed the registry: the `by` of every history event ("<user>@<host>" unless the caller names itself)."""
from __future__ import annotations

import getpass
import socket

from shared.registry.files import RegistryError

#: Longest accepted `by` value (it is a label in the history table, not a document).
MAX_ACTOR_CHARS = 200


def default_actor() -> str:
    """'<user>@<host>' of this process ('unknown' for a part that cannot be found, e.g. a uid without a name)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):   # no $USER/$LOGNAME and no passwd entry for the uid (some containers)
        user = "unknown"
    return f"{user or 'unknown'}@{socket.gethostname() or 'unknown'}"


def resolve_actor(by: str | None) -> str:
    """`by` checked (a non-empty single line of at most MAX_ACTOR_CHARS characters), or default_actor() for None;
    RegistryError naming the problem otherwise."""
    if by is None:
        return default_actor()
    if not isinstance(by, str) or not by.strip() or "\n" in by or "\r" in by or len(by) > MAX_ACTOR_CHARS:
        raise RegistryError(f"by must be a non-empty one-line name of at most {MAX_ACTOR_CHARS} characters "
                            f"(e.g. 'gate' or 'prefect-ui'), got {by!r}")
    return by.strip()
