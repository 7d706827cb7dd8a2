"""`zeroforge models promote/reject/rollback --store URL`: the change, asked for from a host with only the store
and Redis, done by a registry job (services.registry_job) on the train queue, which only workers on the pipeline's
data directory serve. The command waits for its result and prints what the command prints on the data directory.

When no worker takes the job within the wait, the job is taken off the queue (an atomic LREM: if a worker took it
meanwhile, its result is awaited instead) and deleted, so it never fires later; one line names what to start.
"""
from __future__ import annotations

import secrets
import time
from typing import Any

from cli.play_common import fail

#: How long a registry job may run once a worker took it (it takes the registry lock and writes a few files).
JOB_TIMEOUT_S = 120


def _deployment_game(store_url: str, game_name: str | None) -> tuple[str, str]:
    """(the store's deployment identity, the game to change: game_name or the store's only game)."""
    from cli.store_replica import chosen_games, open_deployment
    from shared.store import StoreError

    try:
        store, identity, games = open_deployment(store_url)
    except StoreError as exc:
        fail(exc)
    return identity, chosen_games(store, games, game_name, every_game=False)[0]


def request_registry_change(store_url: str, game_name: str | None, action: str, version: str, reason: str,
                            force: bool, wait_s: float) -> dict[str, Any]:
    """Enqueue `action` (promote, reject, rollback) of `version` for the deployment of the store and wait up to
    `wait_s` seconds for a worker to take it; returns the job's RegistryChangeResult as a dict ({"entry",
    "version", "error"}). fail() in one line without REDIS_URL, with Redis unreachable, when the job failed, or
    when no worker serves the train queue (the job is then cancelled)."""
    from rq import Queue
    from rq.job import JobStatus
    from rq.serializers import JSONSerializer

    from services.jobqueue import (QUEUE_TRAIN, REDIS_DOWN_ERRORS, JobSpec, RedisUrlMissingError, connect, enqueue,
                                   failure_text, redis_url_from_env)
    from services.payloads import RegistryChangePayload, RegistryChangeResult
    from services.redis_server import redact_text
    from services.registry_job import REGISTRY_JOB
    from shared.layout import JobIds
    from shared.registry.actor import default_actor

    identity, game = _deployment_game(store_url, game_name)
    if not version.strip().isdigit():
        fail(f"version {version!r} is not a version number; versions look like 000001 (or just 1)")
    payload = RegistryChangePayload(data_id=identity, game=game, action=action, version=version.strip(),
                                    reason=reason, force=force, by=default_actor())
    job_id = JobIds(identity, game).registry_change(secrets.token_hex(4))
    spec = JobSpec(func=REGISTRY_JOB, payload=payload, queue=QUEUE_TRAIN, job_id=job_id, timeout_s=JOB_TIMEOUT_S,
                   description=f"{game} {action} {payload.version}", retries=0, result_ttl_s=3600)
    try:
        connection = connect(redis_url_from_env())
        job = enqueue(connection, spec)
        deadline, taken = time.monotonic() + wait_s, False
        while True:
            status = job.get_status(refresh=True)
            if status == JobStatus.FINISHED:
                return RegistryChangeResult.model_validate(job.return_value()).model_dump()
            if status in (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED):
                fail(f"the registry job {job_id} failed on its worker: {failure_text(job)}")
            if time.monotonic() > deadline:
                if status == JobStatus.QUEUED and Queue(QUEUE_TRAIN, connection=connection,
                                                        serializer=JSONSerializer).remove(job_id):
                    job.delete()
                    fail(f"no worker took the {action} within {wait_s:.0f} s, so it was cancelled (nothing changed): "
                         "the train queue is served only on the pipeline's data-directory host; start `zeroforge "
                         "worker --queues train --data-dir DATA` there (a running `zeroforge run` has one), then "
                         "retry")
                if taken:
                    fail(f"the registry job {job_id} still runs on its worker after {JOB_TIMEOUT_S} s; see "
                         "`zeroforge status` and the worker's log")
                deadline, taken = time.monotonic() + JOB_TIMEOUT_S, True     # a worker has it: wait for its end
            time.sleep(0.2)
    except RedisUrlMissingError:
        fail(f"models {action} --store changes the registry through the run's Redis: set REDIS_URL (the URL the "
             "workers use)")
    except REDIS_DOWN_ERRORS as exc:
        fail(f"no Redis reachable for the {action} ({redact_text(exc)}); check REDIS_URL")
