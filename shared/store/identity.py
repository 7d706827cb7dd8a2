"""The deployment a store belongs to: the data directory's identity (shared.layout.data_id) kept in the store.

The first pipeline that uses a store claims it by publishing the object IDENTITY_KEY with its data id (a
create-only put, so two pipelines cannot both claim one store). Every later user checks that the store's id is
its own, so a bucket of another deployment is never mixed with this one's shards and models.
"""
from __future__ import annotations

import re

from shared.store.base import ObjectMissingError, ObjectStore
from shared.store.errors import StoreError

IDENTITY_KEY = "zeroforge-id"
_DATA_ID = re.compile(r"^[0-9a-f]{12}$")


def store_identity(store: ObjectStore) -> str | None:
    """The data id the store belongs to (12 hex digits), None when unclaimed; StoreError when damaged."""
    try:
        text = store.get_bytes(IDENTITY_KEY).decode("ascii", "replace").strip()
    except ObjectMissingError:
        return None
    if not _DATA_ID.match(text):
        raise StoreError(f"the store {store.url} holds a damaged {IDENTITY_KEY} object (expected 12 hex digits); "
                         "it is not a zeroforge store, or was changed outside zeroforge")
    return text


def claim_store(store: ObjectStore, data_id: str) -> None:
    """Make `store` this deployment's (`data_id`) if unclaimed; StoreError when it belongs to another."""
    if store_identity(store) is None:
        store.put_bytes(IDENTITY_KEY, (data_id + "\n").encode("ascii"))
    check_store(store, data_id)


def check_store(store: ObjectStore, data_id: str) -> None:
    """StoreError unless `store` belongs to the deployment `data_id` (an unclaimed store is refused too: the
    pipeline claims it when it starts)."""
    owner = store_identity(store)
    if owner is None:
        raise StoreError(f"the store {store.url} holds no zeroforge deployment yet; start the pipeline "
                         "(`zeroforge run --store ...`) first, or check the store URL")
    if owner != data_id:
        raise StoreError(f"the store {store.url} belongs to another zeroforge deployment (id {owner}, this one is "
                         f"{data_id}); use that deployment's Redis, or another bucket or prefix")
