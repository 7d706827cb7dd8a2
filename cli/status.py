"""`zeroforge status`: what the Redis of a run holds now (workers, queues, jobs) and where the pipeline is.

    zeroforge status --data-dir runs/c4
    zeroforge status --data-dir runs/c4 --game connect4 --json

The Redis: --redis-url, else REDIS_URL, else the private Redis that a running `zeroforge run` recorded under the
data directory (shared.layout.redis_url_file, mode 0600); a recorded one that does not answer is the record of a run
killed outright, and is removed (with a line on stderr). The figures come from services.status.collect_status;
the pipeline's generation and phase from the phase record the flows write (shared.phase). With no Redis to ask
(nothing runs on the data directory) it answers from the data directory (services.run_record): each game's last
phase, generations done, best model and its record, and the last gate; --json then prints {"redis": null,
"running": false, "runs": {game: record}}. With --store URL (a host with only the run's object store) the data
directory is a replica synced from the store's registry views (cli.store_replica); REDIS_URL adds the live view.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from cli.store_replica import store_option, sync_registry


def _redis_url(option: str | None, data_dir: Path) -> str | None:
    """The Redis to ask (see the module docstring); None when there is none (nothing runs on `data_dir`)."""
    from services.redis_server import recorded_url
    from shared.layout import redis_url_file

    return option or os.environ.get("REDIS_URL") or recorded_url(redis_url_file(data_dir))


def _forget_dead_run(data_dir: Path, url: str) -> None:
    """The private Redis that a run recorded under `data_dir` does not answer: that run ended without removing its
    record (killed outright: its Redis died with it). Remove the record and say so on stderr (--json stays clean)."""
    from services.redis_server import forget_url
    from shared.layout import redis_url_file

    record = redis_url_file(data_dir)
    forget_url(record, url)
    click.echo(f"the run that recorded its private Redis in {record} has ended without removing that record (killed "
               "outright?); removed it", err=True)


def _offline(data_dir: Path, game: str | None, as_json: bool) -> None:
    """What the data directory records when nothing runs on it (services.run_record): each game's last phase,
    generations done, best model and last gate. UsageError in one line when it holds no run."""
    from services.run_record import run_record, run_record_lines
    from shared.layout import DataLayout, redis_url_file

    pipelines = _pipelines(data_dir, game)
    if not pipelines or (game and not DataLayout(data_dir, game).game_dir.is_dir()):
        raise click.UsageError(f"no run in {data_dir} (no games/{game or '<game>'} directory) and no Redis to ask (no "
                               f"running `zeroforge run` recorded one in {redis_url_file(data_dir)}, REDIS_URL is not "
                               "set); pass the --data-dir of a run, or set REDIS_URL")
    records = {name: run_record(DataLayout(data_dir, name)) for name in pipelines}
    if as_json:
        click.echo(json.dumps({"redis": None, "data_dir": str(data_dir), "running": False, "runs": records},
                              sort_keys=True))
        return
    click.echo(f"nothing runs on {data_dir} (no `zeroforge run` recorded a Redis there); what it records:")
    for name, record in records.items():
        for line in run_record_lines(name, record):
            click.echo(line)


def _pipelines(data_dir: Path, game: str | None) -> dict[str, dict | None]:
    """{game: its phase record or None} for `game`, or for every game under data_dir."""
    from shared.layout import DataLayout, LayoutError, games_in_data_root
    from shared.phase import read_phase

    try:
        games = [game] if game else games_in_data_root(data_dir)
        return {name: read_phase(DataLayout(data_dir, name).phase_file) for name in games}
    except LayoutError as exc:
        raise click.UsageError(str(exc)) from None


def _age(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.0f} s ago"


def render(status: dict) -> None:
    """Print `status` (the JSON object of --json) as rich tables on stdout."""
    from rich.console import Console
    from rich.table import Table

    from shared.phase import phase_line

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)   # logs: no folded names
    console.print(f"redis: {status['redis']}")
    for game, record in status["pipeline"].items():
        console.print(f"pipeline {game}: {phase_line(record)}" + (f", recorded {record['time']}" if record else ""))
        if status.get("oracle", {}).get(game):
            from services.run_record import oracle_status_line

            console.print(f"  oracle: {oracle_status_line(status['oracle'][game])}")
        if status.get("worker_time", {}).get(game):
            from services.run_record import worker_time_line

            console.print(f"  workers: {worker_time_line(status['worker_time'][game])}")
    workers = Table(title=f"workers alive: {len(status['workers'])}", title_justify="left")
    for name in ("name", "host", "device", "queues", "current job", "last heartbeat"):
        workers.add_column(name)
    for w in status["workers"]:
        workers.add_row(w["name"], w["host"] or "-", w["device"] or "-", ",".join(w["queues"]), w["current_job"] or "-",
                        _age(w["heartbeat_age_s"]))
    console.print(workers)
    queues = Table(title="queues", title_justify="left")
    for name in ("queue", "queued", "running", "failed"):
        queues.add_column(name, justify="right" if name != "queue" else "left")
    for name, q in status["queues"].items():
        queues.add_row(name, str(q["queued"]), str(q["running"]), str(q["failed"]))
    console.print(queues)
    for title, rows, columns in (("running jobs", status["running"], ("worker", "progress")),
                                 ("stuck jobs (worker stopped heartbeating)", status["stuck"], ("worker", "progress")),
                                 ("failed jobs", status["failed"], ("error",))):
        if not rows:
            console.print(f"{title}: none")
            continue
        table = Table(title=title, title_justify="left")
        for name in ("job", "queue", *columns):
            table.add_column(name, overflow="fold")
        for row in rows:
            table.add_row(row["id"], row["queue"], *(row.get(name) or "-" for name in columns))
        console.print(table)


@click.command()
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="The run's data directory (default: ZEROFORGE_DATA_DIR or ./zeroforge-data).")
@click.option("--game", default=None, help="Show this game's pipeline only [default: every game in the data dir].")
@click.option("--redis-url", default=None,
              help="The Redis to ask (default: REDIS_URL, else the private Redis of a running `zeroforge run`).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the tables.")
@store_option
def status(data_dir: Path | None, game: str | None, redis_url: str | None, as_json: bool,
           store_url: str | None) -> None:
    """Show the workers alive, queue depths, running, stuck and failed jobs, and the pipeline's phase; with nothing
    running, what the data directory records (generations done, best model, last gate)."""
    from services.jobqueue import REDIS_DOWN_ERRORS, connect
    from services.redis_server import redact_text, redact_url
    from services.status import collect_status
    from shared.layout import default_data_root

    if store_url is not None:
        data_dir = sync_registry(store_url, data_dir, game, every_game=True)
    data_dir = (data_dir or default_data_root()).resolve()
    url = _redis_url(redis_url, data_dir)
    if url is None:
        _offline(data_dir, game, as_json)
        return
    pipeline = _pipelines(data_dir, game)
    try:
        figures = collect_status(connect(url))
    except REDIS_DOWN_ERRORS as exc:
        if not redis_url and not os.environ.get("REDIS_URL"):   # the record of a run that ended without removing it
            _forget_dead_run(data_dir, url)
            _offline(data_dir, game, as_json)
            return
        raise click.ClickException(f"no Redis reachable at {redact_url(url)} ({redact_text(exc)}); is the run "
                                   "still going? pass --redis-url or set REDIS_URL") from None
    from services.run_record import last_oracle, last_worker_time
    from shared.layout import DataLayout

    oracle = {name: last_oracle(DataLayout(data_dir, name)) for name in pipeline}
    split = {name: last_worker_time(DataLayout(data_dir, name)) for name in pipeline}
    result = {"redis": redact_url(url), "data_dir": str(data_dir), "pipeline": pipeline, "oracle": oracle,
              "worker_time": split, **figures}
    if as_json:
        click.echo(json.dumps(result, sort_keys=True))
    else:
        render(result)
