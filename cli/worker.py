"""`zeroforge worker`: join a pipeline as an rq worker on this machine (CPU or one GPU)."""
from __future__ import annotations

import logging
import os
from pathlib import Path

import click

from services.jobqueue import ALL_QUEUES, QUEUE_TRAIN

#: The queues of a worker with a store: training runs where the pipeline's data directory is.
STORE_QUEUES = tuple(q for q in ALL_QUEUES if q != QUEUE_TRAIN)
from services.worker import DEFAULT_HEARTBEAT_S, HEARTBEATS_PER_TTL


@click.command()
@click.option("--queues", default=None,
              help="Comma-separated queues to take jobs from, in priority order (default: train,eval,selfplay; "
                   "with --store: eval,selfplay).")
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              envvar="ZEROFORGE_DATA_DIR",
              help="The pipeline's data directory (shards and models), the same as the run's --data-dir "
                   "(or set ZEROFORGE_DATA_DIR); jobs read and write nothing outside it. With --store: this worker's "
                   "own directory for its replica of the models it plays (default ./zeroforge-worker).")
@click.option("--store", default=None, envvar="ZEROFORGE_STORE",
              help="The run's object store, s3://BUCKET/PREFIX (or ZEROFORGE_STORE; keys from AWS_ENDPOINT_URL, "
                   "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), for a worker on a host without the data directory: "
                   "it takes models from the store and publishes its shards there (self-play and eval jobs).")
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N.")
@click.option("--redis-url", envvar=["ZEROFORGE_REDIS_URL", "REDIS_URL"], required=True,
              help="Redis of the pipeline, e.g. redis://:PASSWORD@host:6379/0; better set REDIS_URL, which keeps "
                   "the password off the command line.")
@click.option("--torch-threads", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Torch threads for this worker; one per worker process is fastest on shared CPUs.")
@click.option("--heartbeat", "heartbeat_s", type=click.IntRange(1, 300), default=DEFAULT_HEARTBEAT_S,
              show_default=True,
              help=f"Seconds between heartbeats; a job of this worker is requeued {HEARTBEATS_PER_TTL} missed "
                   "heartbeats after it died.")
@click.option("--precision", type=click.Choice(["auto", "fp32", "bf16"]), default="auto", show_default=True,
              help="Network precision: auto = bf16 on CUDA; on CPU bf16 only with native bf16 (AVX512-BF16/AMX) "
                   "for networks of 48+ channels at batches of 4+ positions (where it measured faster).")
@click.option("--overlap", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True,
              help="Self-play: two game groups alternate between search and network (auto: on for CUDA, off on "
                   "CPU, where it was measured no faster per core).")
@click.option("--processes", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Self-play search processes sharing this worker's ONE network on its device (CUDA: an inference "
                   "server merges their leaf batches into one forward pass; CPU: each batch gets its own pass, up to "
                   "N at once, one core each); 1 = search in the worker itself.")
@click.option("--name", default=None, help="Worker name (default: host, pid and device).")
@click.option("--burst", is_flag=True, help="Exit when the queues are empty instead of waiting for work.")
def worker(queues: str | None, data_dir: Path | None, store: str | None, device: str, redis_url: str,
           torch_threads: int, heartbeat_s: int, precision: str, overlap: str, processes: int, name: str | None,
           burst: bool) -> None:
    """Start one worker that runs self-play, training and evaluation jobs for the run on DATA_DIR.

    Without --store the data directory is shared by the run and all its workers (on other machines, a shared
    mount); it must already be a zeroforge data directory (`zeroforge run` makes it). With --store the worker
    needs only Redis and the store: it runs self-play and eval jobs in a directory of its own.
    """
    from redis.exceptions import RedisError

    from services.jobqueue import RedisLostError
    from services.payloads import WorkerContext
    from services.redis_server import redact_text, redact_url
    from services.worker import WorkerConfigError, run_worker
    from shared.layout import LayoutError, data_id

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("OMP_NUM_THREADS", str(torch_threads))
    from redis.connection import parse_url

    try:
        if not redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("unknown scheme")
        parse_url(redis_url)
    except ValueError as exc:
        raise click.UsageError(f"--redis-url {redact_url(redis_url)!r}: {exc}; expected "
                               "redis://[:PASSWORD@]HOST:PORT/DB, rediss://... or unix://...") from None
    names = [q.strip() for q in (queues or ",".join(STORE_QUEUES if store else ALL_QUEUES)).split(",") if q.strip()]
    try:
        if store is not None:
            data_dir = _replica_dir(store, data_dir, names)
        elif data_dir is None:
            raise click.UsageError("--data-dir is required (the pipeline's data directory), or --store with a "
                                   "worker directory of its own")
        else:
            data_id(data_dir, create=False)   # a typo in --data-dir stops here, not at the first job
        context = WorkerContext(data_dir=data_dir.resolve(), device=device, precision=precision, overlap=overlap,
                                processes=processes, store=store)
        run_worker(redis_url, names, context, torch_threads, burst, name, heartbeat_s=heartbeat_s)
    except LayoutError as exc:
        raise click.UsageError(f"--data-dir {data_dir}: {exc}") from None
    except WorkerConfigError as exc:
        raise click.UsageError(str(exc)) from None
    except RedisLostError as exc:
        raise click.ClickException(redact_text(exc)) from None
    except RedisError as exc:
        raise click.ClickException(f"cannot reach Redis at {redact_url(redis_url)}: {redact_text(exc)}. Check the "
                                   "host, port and password (redis://:PASSWORD@HOST:PORT/0) and that the server "
                                   "binds a reachable address.") from None


def _replica_dir(store: str, data_dir: Path | None, queues: list[str]) -> Path:
    """The directory of a worker with a store (its replica of the models it plays): checked to reach the store,
    refused with the train queue. click.UsageError / ClickException in one line."""
    from shared.store import StoreError, open_store, store_identity

    if QUEUE_TRAIN in queues:
        raise click.UsageError(f"--queues {','.join(queues)}: a worker with --store cannot train (training runs "
                               "where the pipeline's data directory is); use --queues " + ",".join(STORE_QUEUES))
    try:
        store_identity(open_store(store, outage_s=30))       # reachable, with these keys
    except StoreError as exc:
        raise click.ClickException(f"--store: {exc}") from None
    directory = (data_dir or Path("zeroforge-worker")).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    return directory
