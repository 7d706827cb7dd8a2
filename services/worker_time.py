"""Where the workers' time went during a stretch of wall clock: self-play, training, gate, anchor, idle.

Read from what rq already keeps in Redis: each job's started_at/ended_at (the finished, running and failed jobs of
the pipeline's queues) and each live worker's birth time. A job is counted for the part of its run inside the
window, so self-play enqueued ahead of its generation counts in the generation whose wall clock it used. A job's
role comes from its id (shared.layout.JobIds: -sp, -train-, -gate-, -anchor-); only the jobs of one data directory
and game (the id prefix) count.

Idle = the live workers' time inside the window (each from its birth, at most the window) minus their busy time,
never below 0. A worker that died inside the window is not counted as available (its jobs still count as busy),
and a worker busy with another pipeline's jobs on the same Redis counts as idle for this one.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from redis import Redis
from rq.defaults import RQ_KEY_PREFIX
from rq.job import Job
from rq.registry import FailedJobRegistry, FinishedJobRegistry, StartedJobRegistry
from rq.serializers import JSONSerializer
from rq.utils import as_text, utcparse

from services.jobqueue import ALL_QUEUES
from services.worker import live_workers
from shared.curves.metrics import WORKER_ROLE_LABELS, WORKER_ROLES

#: The roles of JobIds, in report order, with the id fragment that marks each.
ROLES = (("selfplay", "-sp"), ("train", "-train-"), ("gate", "-gate-"), ("anchor", "-anchor-"))


@dataclass(frozen=True)
class WorkerTime:
    """Worker-seconds inside one window of `window_s` wall seconds, over `workers` live workers."""

    workers: int
    window_s: float
    selfplay_s: float
    train_s: float
    gate_s: float
    anchor_s: float
    idle_s: float

    @property
    def total_s(self) -> float:
        """Busy plus idle worker-seconds (the denominator of every share)."""
        return sum(getattr(self, f"{role}_s") for role in WORKER_ROLES)

    def share(self, role: str) -> float | None:
        """The fraction of all worker-seconds spent in `role` ("selfplay", "train", "gate", "anchor", "idle");
        None when the window holds no worker time."""
        total = self.total_s
        return getattr(self, f"{role}_s") / total if total > 0 else None

    def metric_fields(self) -> dict[str, float | int]:
        """The GenerationMetrics fields of this split: workers and worker_<role>_s (rounded to 0.1 s)."""
        return {"workers": self.workers, **{f"worker_{role}_s": round(getattr(self, f"{role}_s"), 1)
                                            for role in WORKER_ROLES}}

    def line(self) -> str:
        """'2 workers x 95 s: self-play 71% (135 s), training 18% (34 s), gate 9% (17 s), anchor 0% (0 s),
        idle 2% (4 s)'."""
        parts = []
        for role, label in zip(WORKER_ROLES, WORKER_ROLE_LABELS):
            share = self.share(role)
            parts.append(f"{label} {'-' if share is None else f'{100 * share:.0f}%'} ({getattr(self, f'{role}_s'):.0f} s)")
        return f"{self.workers} worker(s) x {self.window_s:.0f} s: " + ", ".join(parts)


def job_role(job_id: str) -> str | None:
    """The role of a zeroforge job id ("selfplay", "train", "gate", "anchor"), None for anything else."""
    for role, mark in ROLES:
        if mark in job_id:
            return role
    return None


def _overlap(start: datetime, end: datetime, window_start: datetime, window_end: datetime) -> float:
    """Seconds of [start, end] inside [window_start, window_end] (0 when they do not meet)."""
    return max(0.0, (min(end, window_end) - max(start, window_start)).total_seconds())


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _candidate_ids(connection: Redis, since: datetime, result_ttl_s: int, queues: tuple[str, ...]) -> set[str]:
    """Ids of the jobs that may have run inside a window starting at `since`: running ones, and finished or failed
    ones whose registry entry (scored by its expiry: the end plus the job's TTL) expires after since + TTL."""
    ids: set[str] = set()
    low = since.timestamp() + result_ttl_s
    for name in queues:
        ids.update(StartedJobRegistry(name, connection=connection).get_job_ids(cleanup=False))
        for registry in (FinishedJobRegistry(name, connection=connection),
                         FailedJobRegistry(name, connection=connection)):
            ids.update(as_text(raw) for raw in connection.zrangebyscore(registry.key, low, "+inf"))
    return ids


def worker_time(connection: Redis, job_prefix: str, window_start: datetime, window_end: datetime | None = None,
                result_ttl_s: int = 60, queues: tuple[str, ...] = ALL_QUEUES) -> WorkerTime:
    """Worker-seconds by role inside [window_start, window_end] (UTC datetimes; end default now) for the jobs whose
    id starts with `job_prefix` (e.g. "zf-<data id>-<game>-g"), on `queues`. result_ttl_s: the TTL the pipeline
    gives finished jobs (pipeline.result_ttl_s; failed jobs keep theirs longer, so they are found too)."""
    start = _utc(window_start)
    end = _utc(window_end or datetime.now(timezone.utc))
    now = datetime.now(timezone.utc)
    busy = {role: 0.0 for role, _ in ROLES}
    ids = sorted(i for i in _candidate_ids(connection, start, result_ttl_s, queues) if i.startswith(job_prefix))
    for job in Job.fetch_many(ids, connection=connection, serializer=JSONSerializer):
        role = None if job is None else job_role(job.id)
        if role is None or job.started_at is None:
            continue
        busy[role] += _overlap(_utc(job.started_at), _utc(job.ended_at) if job.ended_at else now, start, end)
    available = 0.0
    names = sorted({name for queue in queues for name in live_workers(connection, queue)})
    for name in names:
        birth = connection.hget(f"{RQ_KEY_PREFIX}:worker:{name}", "birth")
        born = utcparse(as_text(birth)) if birth else start
        available += _overlap(born, end, start, end)
    used = sum(busy.values())
    return WorkerTime(workers=len(names), window_s=(end - start).total_seconds(), selfplay_s=busy["selfplay"],
                      train_s=busy["train"], gate_s=busy["gate"], anchor_s=busy["anchor"],
                      idle_s=max(0.0, available - used))
