"""The store's errors: each says in one line what is wrong and how to fix it (the CLI prints str(error))."""
from __future__ import annotations


class StoreError(ValueError):
    """A store URL, its credentials, its bucket or an object is not usable; the message names what and why."""


class StoreUnavailableError(StoreError):
    """The store did not answer (connection refused, timeouts, 5xx) for longer than the patience allowed: a rerun,
    once it answers again, resumes."""


class StoreIntegrityError(StoreError):
    """An object's bytes differ from what zeroforge recorded for it (changed behind zeroforge's back): never used."""
