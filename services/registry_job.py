"""The registry job: a promotion, rejection or rollback asked for by a host that has only the store and Redis
(`zeroforge models rollback V --store URL`), done where the pipeline's data directory is.

The job goes on the train queue, which only workers on the data directory serve (a worker with a store refuses
that queue), so the change is ModelRegistry's own promote/reject/rollback under the registry lock, with its
compare-and-swap of the best pointer and its append-only history, exactly as the command does on the data
directory. Afterwards the store's registry view is republished (shared.store.view.republish_recorded_view). A
refusal by the registry (an unknown version, a version that was never best) comes back as the result's `error`,
in the registry's one line; the job itself does not fail for it.
"""
from __future__ import annotations

from services.payloads import PayloadError, RegistryChangePayload, RegistryChangeResult, WorkerContext
from shared.layout import check_game_name
from shared.registry import ModelRegistry, RegistryError
from shared.store.view import republish_recorded_view

#: The job function's dotted name (services.worker.JOB_FUNCTIONS).
REGISTRY_JOB = "services.registry_job.registry_job"


def registry_job(payload: dict, worker: WorkerContext) -> dict:
    """Apply a RegistryChangePayload (a JSON dict) to the registry of the worker's data directory; returns a
    RegistryChangeResult as a JSON dict. PayloadError on a worker with a store (its registry is a replica) or on
    another deployment's data directory."""
    if worker.store is not None:
        raise PayloadError("registry changes run where the pipeline's data directory is; this worker holds a store "
                           "replica: give it --queues selfplay,eval")
    job = RegistryChangePayload.model_validate(payload)
    layout = worker.layout(check_game_name(job.game), job.data_id)
    registry = ModelRegistry(layout.registry_dir)
    try:
        change = getattr(registry, job.action)
        entry = change(job.version, job.reason, force=job.force, by=job.by)
        version = registry.get(job.version).version
    except RegistryError as exc:
        return RegistryChangeResult(version=job.version, error=str(exc)).model_dump(mode="json")
    if entry is not None:
        republish_recorded_view(layout)
    return RegistryChangeResult(entry=entry, version=version).model_dump(mode="json")
