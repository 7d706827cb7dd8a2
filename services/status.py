"""What a Redis of zeroforge holds right now, for `zeroforge status`: workers, queues, running, failed, stuck jobs.

Read-only: nothing here changes Redis. Workers are the live ones only (services.worker.worker_is_live: a fresh
heartbeat), so a killed worker disappears once its heartbeat TTL passes (4 heartbeats, 20 s by default). A
stuck job is one in a queue's StartedJobRegistry whose execution entry expired: its worker stopped
heartbeating, and the waiting pipeline will requeue it (or fail it) at its next look.
"""
from __future__ import annotations

import time
from typing import Any

from redis import Redis
from rq import Queue
from rq.defaults import RQ_KEY_PREFIX
from rq.job import Job
from rq.registry import FailedJobRegistry, StartedJobRegistry
from rq.serializers import JSONSerializer
from rq.utils import as_text
from rq.worker_registration import REDIS_WORKER_KEYS

from services.jobqueue import ALL_QUEUES, TTL_FIELD, failure_text
from services.progress import META_KEY, record_text
from services.worker import DEVICE_FIELD, heartbeat_age_s, worker_is_live

#: The most failed jobs listed per queue (the newest).
MAX_FAILED = 10


def _text(value: bytes | None) -> str | None:
    return as_text(value) if value is not None else None


def _workers(connection: Redis, current: dict[str, str]) -> list[dict[str, Any]]:
    workers = []
    for key in sorted(as_text(k) for k in connection.smembers(REDIS_WORKER_KEYS)):
        fields = connection.hmget(key, "last_heartbeat", "death", TTL_FIELD, "hostname", "pid",
                                  "queues", DEVICE_FIELD)
        last, death, ttl, host, pid, queues, device = fields
        name = key.removeprefix(f"{RQ_KEY_PREFIX}:worker:")
        if not worker_is_live(last, death, ttl, name, host, pid):
            continue
        age = heartbeat_age_s(last)
        workers.append({"name": name, "host": _text(host), "pid": int(pid) if pid and as_text(pid).isdigit() else None,
                        "device": _text(device), "queues": (_text(queues) or "").split(","),
                        "current_job": current.get(name), "heartbeat_age_s": round(age, 1) if age is not None else None})
    return workers


def _job_row(job: Job | None, job_id: str, queue: str) -> dict[str, Any]:
    row: dict[str, Any] = {"id": job_id, "queue": queue, "description": job.description if job else None}
    record = job.meta.get(META_KEY) if job is not None and isinstance(job.meta, dict) else None
    row["progress"] = record_text(record) if isinstance(record, dict) else None
    return row


def collect_status(connection: Redis, queues: tuple[str, ...] = ALL_QUEUES) -> dict[str, Any]:
    """Everything `zeroforge status` shows, as one JSON-ready dict: {"workers": [{name, host, pid, device,
    queues, current_job, heartbeat_age_s}], "queues": {name: {queued, running, failed}}, "running": [{id, queue,
    description, progress, worker}], "stuck": [...same, expired_s], "failed": [{id, queue, description, error}]}.
    Raises redis' ConnectionError when Redis cannot be reached."""
    now = time.time()
    depth, running, stuck, failed = {}, [], [], []
    current: dict[str, str] = {}
    for name in queues:
        queue = Queue(name, connection=connection, serializer=JSONSerializer)
        started = StartedJobRegistry(queue=queue)
        entries = connection.zrange(started.key, 0, -1, withscores=True)
        failed_ids = FailedJobRegistry(queue=queue).get_job_ids(cleanup=False)
        depth[name] = {"queued": queue.count, "running": len(entries), "failed": len(failed_ids)}
        for raw, expires in entries:
            job_id, execution = as_text(raw).rsplit(":", 1)
            job = Job.fetch_many([job_id], connection=connection, serializer=JSONSerializer)[0]
            worker = _text(connection.hget(f"{RQ_KEY_PREFIX}:execution:{job_id}:{execution}", "worker_name"))
            row = {**_job_row(job, job_id, name), "worker": worker}
            if expires < now:
                stuck.append({**row, "expired_s": round(now - expires, 1)})
            else:
                running.append(row)
                if worker:
                    current[worker] = job_id
        for job_id in failed_ids[-MAX_FAILED:]:
            job = Job.fetch_many([job_id], connection=connection, serializer=JSONSerializer)[0]
            failed.append({**_job_row(job, job_id, name), "error": failure_text(job) if job else "expired"})
    return {"workers": _workers(connection, current), "queues": depth, "running": running, "stuck": stuck,
            "failed": failed}
