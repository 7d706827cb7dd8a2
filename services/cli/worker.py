"""`zeroforge worker`: join a pipeline as an rq worker on this machine (CPU or one GPU)."""
from __future__ import annotations

import logging
import os

import click

from services.jobqueue import ALL_QUEUES


@click.command()
@click.option("--queues", default=",".join(ALL_QUEUES), show_default=True,
              help="Comma-separated queues to take jobs from (selfplay, train, eval).")
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N.")
@click.option("--redis-url", envvar="REDIS_URL", required=True,
              help="Redis of the pipeline, e.g. redis://:PASSWORD@host:6379/0 (or set REDIS_URL).")
@click.option("--torch-threads", type=int, default=1, show_default=True,
              help="Torch threads for this worker; one per worker process is fastest on shared CPUs.")
@click.option("--name", default=None, help="Worker name (default: host, pid and device).")
@click.option("--burst", is_flag=True, help="Exit when the queues are empty instead of waiting for work.")
def worker(queues: str, device: str, redis_url: str, torch_threads: int, name: str | None, burst: bool) -> None:
    """Start one worker that runs self-play, training and evaluation jobs.

    The shard and model store (ZEROFORGE_DATA_DIR / the pipeline's data dir) must be the same path on
    every machine, e.g. a shared mount: jobs carry absolute paths.
    """
    from redis.exceptions import ConnectionError as RedisConnectionError

    from services.redis_server import redact_url
    from services.worker import WorkerConfigError, run_worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("OMP_NUM_THREADS", str(torch_threads))
    try:
        run_worker(redis_url, [q.strip() for q in queues.split(",") if q.strip()], device, torch_threads, burst, name)
    except WorkerConfigError as exc:
        raise click.UsageError(str(exc)) from None
    except RedisConnectionError as exc:
        raise click.ClickException(f"cannot reach Redis at {redact_url(redis_url)}: {exc}. Check the host, port and password "
                                   "(redis://:PASSWORD@HOST:PORT/0) and that the server binds a reachable address.")
