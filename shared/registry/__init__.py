"""The model registry: numbered versions (000001, ...), candidate -> promoted / rejected, a `best` pointer,
rollback, and an append-only history; safe for several processes (see registry.py)."""
from shared.registry.files import RegistryError
from shared.registry.registry import ANY_BEST, BestChangedError, ModelRegistry
from shared.registry.version import CANDIDATE, PROMOTED, REJECTED, STATUSES, ModelVersion, normalise_version

__all__ = ["ANY_BEST", "BestChangedError", "CANDIDATE", "PROMOTED", "REJECTED", "STATUSES", "ModelRegistry", "ModelVersion", "RegistryError", "normalise_version"]
