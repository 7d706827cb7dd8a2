"""The model registry: numbered versions (000001, ...), candidate -> promoted / rejected (a promoted version a
rollback abandons: retired), a `best` pointer, rollback, an append-only history of who did what and why, and the
lineage tree; safe for several processes (see registry.py)."""
from shared.registry.actor import default_actor
from shared.registry.files import RegistryError
from shared.registry.lineage import lineage_tree
from shared.registry.registry import ANY_BEST, BestChangedError, ModelRegistry
from shared.registry.version import (
    CANDIDATE, DECIDED, PROMOTED, REJECTED, RETIRED, STATUSES, WAS_BEST, ModelVersion, normalise_version,
)

__all__ = ["ANY_BEST", "BestChangedError", "CANDIDATE", "DECIDED", "PROMOTED", "REJECTED", "RETIRED", "STATUSES",
           "WAS_BEST", "ModelRegistry", "ModelVersion", "RegistryError", "default_actor", "lineage_tree",
           "normalise_version"]
