"""Where a deployment's immutable objects live: a local directory or an S3-compatible bucket, behind one small
interface (shared.store.base), with the deployment's identity (shared.store.identity) and what crosses it between
the pipeline and workers on other hosts (shared.store.replica). `open_store(url)` gives the backend for a store URL
(shared.store.url)."""
from __future__ import annotations

from shared.store.base import ObjectInfo, ObjectMissingError, ObjectStore, check_key
from shared.store.errors import StoreError, StoreIntegrityError, StoreUnavailableError
from shared.store.identity import IDENTITY_KEY, check_store, claim_store, store_identity
from shared.store.url import StoreURL, parse_store_url

__all__ = ["IDENTITY_KEY", "ObjectInfo", "ObjectMissingError", "ObjectStore", "StoreError",
           "StoreIntegrityError", "StoreURL", "StoreUnavailableError", "check_key", "check_store", "claim_store",
           "open_store", "parse_store_url", "store_identity"]


def open_store(url: str | StoreURL, outage_s: float = 120.0) -> ObjectStore:
    """The backend for store URL `url` (a string is parsed first); `outage_s`: how long an S3 request is retried
    while the service does not answer. StoreError for a bad URL or configuration."""
    parsed = parse_store_url(url) if isinstance(url, str) else url
    if parsed.kind == "s3":
        from shared.store.s3 import S3ObjectStore

        return S3ObjectStore(parsed, outage_s=outage_s)
    from shared.store.local import LocalObjectStore

    return LocalObjectStore(parsed)
