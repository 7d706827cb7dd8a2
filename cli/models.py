"""`zeroforge models`: make the first model, list, inspect, promote, reject and roll back registered model
versions, show who did what (history) and which was trained from which (tree), and export one to ONNX.

    zeroforge models init --game tictactoe              # a random network registered as 000001 and made best
    zeroforge models export shipped --game connect4 --format onnx -o connect4.onnx
    zeroforge models tree --game tictactoe              # which version was trained from which, gate and status

The registry is DataLayout(root, game).registry_dir; root from --data-dir, else $ZEROFORGE_DATA_DIR,
else ./zeroforge-data; game from --game, else the only game in the data root.
With --store URL (a host with only the run's object store), the reading commands read a replica synced from the
store's registry view first (cli.store_replica); promote, reject and rollback become a registry job that a worker
on the data-directory host runs (cli.registry_request, through REDIS_URL).
Errors print one line `error: ...` on stderr and exit with code 2.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Callable, NoReturn

import click

from shared.layout import DataLayout, LayoutError, default_data_root, resolve_game_name
from shared.registry import ModelRegistry, ModelVersion, RegistryError, lineage_tree
from cli.common import config_options, load_pipeline_config
from cli.store_replica import store_option, sync_registry
from shared.store.view import republish_recorded_view
from cli.model_views import anchor_text, gate_text, lineage_json, lineage_renderable, status_text
from cli.render import text_table


#: Console width of `models tree` when stdout is not a terminal (lines are not padded, only never wrapped).
UNWRAPPED_WIDTH = 100_000


def _fail(message: object) -> NoReturn:
    """One-line error on stderr, exit code 2."""
    click.echo(f"error: {' '.join(str(message).split())}", err=True)
    raise click.exceptions.Exit(2)


def _with_registry(command: Callable[..., None]) -> Callable[..., None]:
    """Add --game/--data-dir/--store, pass `registry` instead, and turn RegistryError/LayoutError into one-line
    errors. With --store the registry is a replica synced from the store's registry view (cli.store_replica)."""

    @click.option("--game", "game_name", help="Game (default: the only game in the data dir).")
    @click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False),
                  help="Data root (default: $ZEROFORGE_DATA_DIR, else ./zeroforge-data; with --store: the replica, "
                       "default a cache directory per deployment).")
    @store_option
    @functools.wraps(command)
    def wrapper(game_name: str | None, data_dir: Path | None, store_url: str | None, **kwargs: Any) -> None:
        if store_url is not None:
            data_dir = sync_registry(store_url, data_dir, game_name)
        try:
            root = data_dir or default_data_root()
            game = resolve_game_name(root, game_name, must_exist=True)
            command(registry=ModelRegistry(DataLayout(root, game).registry_dir, game_name=game), **kwargs)
        except (RegistryError, LayoutError) as exc:
            _fail(exc)

    return wrapper


def _registry_change(action: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The decorator of `models promote/reject/rollback` (`action`): --game/--data-dir as _with_registry; on the
    data directory the command runs with the registry, then the store's view is republished when the data
    directory records a store; with --store URL (a host with only the store and Redis) the change is a registry
    job done on the data-directory host (cli.registry_request), and its result is printed as the command prints
    it."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        @click.option("--game", "game_name", help="Game (default: the only game in the data dir).")
        @click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False),
                      help="Data root (default: $ZEROFORGE_DATA_DIR, else ./zeroforge-data).")
        @click.option("--store", "store_url", envvar="ZEROFORGE_STORE", default=None, metavar="URL",
                      help="The run's object store (or ZEROFORGE_STORE), from a host without the data directory: "
                           "the change runs as a job on the data-directory host's train worker, through REDIS_URL.")
        @click.option("--wait", "wait_s", type=click.FloatRange(1, 3600), default=60.0, show_default=True,
                      help="With --store: seconds to wait for a worker to take the change before cancelling it.")
        @functools.wraps(command)
        def wrapper(game_name: str | None, data_dir: Path | None, store_url: str | None, wait_s: float,
                    version: str, reason: str, force: bool) -> None:
            if store_url is not None:
                from cli.registry_request import request_registry_change

                result = request_registry_change(store_url, game_name, action, version, reason, force, wait_s)
                if result["error"]:
                    _fail(result["error"])
                _print_change(action, result["entry"], result["version"])
                return
            try:
                root = data_dir or default_data_root()
                game = resolve_game_name(root, game_name, must_exist=True)
                command(registry=ModelRegistry(DataLayout(root, game).registry_dir, game_name=game), version=version,
                        reason=reason, force=force)
            except (RegistryError, LayoutError) as exc:
                _fail(exc)
            republish_recorded_view(DataLayout(root, game))

        return wrapper

    return decorate


def _version_json(record: ModelVersion, best: str | None) -> dict[str, Any]:
    return {**record.to_dict(), "best": record.version == best}


def _readable(registry: ModelRegistry) -> tuple[list[ModelVersion], str | None]:
    """(the readable versions, the best version or None); damaged versions, a damaged best.json and a best
    pointer to a missing version are reported as warnings on stderr instead of stopping the command."""
    records, problems = registry.scan()
    for problem in problems:
        click.echo(f"warning: {' '.join(problem.split())}", err=True)
    try:
        best = registry.best_version()
    except RegistryError as exc:
        click.echo(f"warning: {' '.join(str(exc).split())}", err=True)
        best = None
    if best is not None and best not in {r.version for r in records}:
        click.echo(f"warning: best.json points at version {best}, which is not in the registry (missing or damaged); "
                   "choose a best with `zeroforge models rollback V --force`", err=True)
    return records, best


@click.group()
def models() -> None:
    """The model registry: versions, the best model, promotions and rollbacks."""


@models.command("ls")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
@_with_registry
def ls_command(registry: ModelRegistry, as_json: bool) -> None:
    """List model versions (the best one is marked with *); damaged versions and a best pointer to a missing
    version are reported as warnings on stderr."""
    records, best = _readable(registry)
    if as_json:
        click.echo(json.dumps([_version_json(r, best) for r in records], indent=2))
        return
    rows = [(("*" if r.version == best else " ") + r.version, status_text(r.status, r.forced), r.generation,
             r.parent or "-", gate_text(r.gate) or "-", anchor_text((r.gate or {}).get("anchor")) or "-",
             r.created[:19]) for r in records]
    click.echo(text_table(["version", "status", "gen", "parent", "gate score [CI]", "anchor", "created (UTC)"], rows))
    click.echo(f"{len(records)} versions; best: {best or 'none yet'}")


@models.command("show")
@click.argument("version")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_with_registry
def show_command(registry: ModelRegistry, version: str, as_json: bool) -> None:
    """Show everything recorded about VERSION."""
    data = _version_json(registry.get(version), registry.best_version())
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for key in sorted(data):
        value = data[key]
        click.echo(f"{key:<15} {json.dumps(value) if isinstance(value, (dict, list)) else value}")


def _print_change(action: str, entry: dict[str, Any] | None, version: str) -> None:
    """Print what `action` (promote, reject, rollback) of `version` did: the history entry (event, version, forced,
    and for promote/rollback the previous best, retired version, reason, by), or that nothing changed (entry
    None)."""
    forced = " (forced)" if entry is not None and entry.get("forced") else ""
    if action == "reject":
        click.echo(f"{version} already is rejected; nothing changed" if entry is None else
                   f"reject{forced}: {entry['version']}: {entry['reason']} [by {entry['by']}]")
        return
    if entry is None:
        click.echo(f"{version} already is the best model; nothing changed")
        return
    retired = ", now retired" if entry.get("retired") else ""
    click.echo(f"{entry['event']}{forced}: {entry['version']} (previous best {entry['previous_best'] or 'none'}"
               f"{retired}): {entry['reason']} [by {entry['by']}]")


@models.command("promote")
@click.argument("version")
@click.option("--reason", default="manual promotion", show_default=True,
              help="Why, recorded in the history with who did it (user@host).")
@click.option("--force", is_flag=True,
              help="Allow a version that never passed a gate (a rejected one, or a candidate whose gate result "
                   "is not 'promote'); recorded as forced.")
@_registry_change("promote")
def promote_command(registry: ModelRegistry, version: str, reason: str, force: bool) -> None:
    """Make VERSION the best model (the one self-play uses); the history records the reason and who (user@host).
    A version that was best before (or an ancestor of the best) is refused: going back is `models rollback`."""
    _print_change("promote", registry.promote(version, reason, force=force), registry.get(version).version)


@models.command("reject")
@click.argument("version")
@click.option("--reason", default="manual rejection", show_default=True,
              help="Why, recorded in the history with who did it (user@host).")
@click.option("--force", is_flag=True, help="Allow rejecting a version that was best before (promoted or retired).")
@_registry_change("reject")
def reject_command(registry: ModelRegistry, version: str, reason: str, force: bool) -> None:
    """Mark candidate VERSION rejected."""
    _print_change("reject", registry.reject(version, reason, force=force), registry.get(version).version)


@models.command("rollback")
@click.argument("version")
@click.option("--reason", default="manual rollback", show_default=True,
              help="Why, recorded in the history with who did it (user@host).")
@click.option("--force", is_flag=True, help="Allow a version that was never promoted; recorded as forced.")
@_registry_change("rollback")
def rollback_command(registry: ModelRegistry, version: str, reason: str, force: bool) -> None:
    """Point the best model back at VERSION (one that was best before: promoted or retired); the next generation
    plays with it, and the version that was best becomes retired."""
    _print_change("rollback", registry.rollback(version, reason, force=force), registry.get(version).version)


@models.command("history")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@_with_registry
def history_command(registry: ModelRegistry, as_json: bool) -> None:
    """Promotions, rejections and rollbacks, oldest first, with who did them (by) and why (reason)."""
    entries = registry.history()
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return
    rows = [(e.get("time", "")[:19], e["event"] + (" (forced)" if e.get("forced") else ""), e["version"],
             e.get("previous_best") or "-", e.get("retired") or "-", e.get("by") or "-", e.get("reason", ""))
            for e in entries]
    click.echo(text_table(["time (UTC)", "event", "version", "previous best", "retired", "by", "reason"], rows))


@models.command("tree")
@click.option("--json", "as_json", is_flag=True, help="Print the lineage as nested JSON objects (key \"children\").")
@_with_registry
def tree_command(registry: ModelRegistry, as_json: bool) -> None:
    """The lineage: which version was trained from which, with generation, status (forced marked), gate score
    [CI] and decision, anchor figure and the best model. Each line of descent is one list; other children of a
    version hang under it as "branch from V"."""
    records, best = _readable(registry)
    forest = lineage_tree(records, best)
    if as_json:
        click.echo(lineage_json(forest))
        return
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:   # piped or captured: whole lines, never cut at 80 columns
        console = Console(highlight=False, width=UNWRAPPED_WIDTH)
    title = f"{registry.game_name or registry.directory}: {len(records)} versions, best {best or 'none yet'}"
    console.print(lineage_renderable(forest, title))


def _run_start(registry: ModelRegistry):
    """When the run began: the creation time of its first model (generation 0), None when unknown."""
    from datetime import datetime

    first = [v for v in registry.scan()[0] if v.generation == 0]
    try:
        return datetime.fromisoformat(min(v.created for v in first)) if first else None
    except ValueError:
        return None


@models.command("strength")
@click.option("--game", "game_name", help="Game (default: the only game in the data dir).")
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Data root (default: $ZEROFORGE_DATA_DIR, else ./zeroforge-data).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
@click.option("--plot", "plot_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Also draw the anchor score against the hours of training to this PNG file.")
@store_option
def strength_command(game_name: str | None, data_dir: Path | None, as_json: bool, plot_path: Path | None,
                     store_url: str | None) -> None:
    """Strength against wall-clock time: for each finished generation, the hours of training up to its end (the
    generations' own durations summed, so pauses between sittings do not count), whether its candidate was
    promoted, the anchor match of each new best (score with its 95% interval, Elo), and the best model's oracle
    figures (share of labelled positions where its raw policy / its small search keeps the exact outcome, 95%
    intervals in --json). Read from the run's
    metrics file (reports/generations.jsonl). Hours marked "~" are estimated: generations recorded before their
    duration was stored count the time since the previous record instead."""
    from shared.curves import elapsed_hours, read_metrics

    if store_url is not None:
        data_dir = sync_registry(store_url, data_dir, game_name)
    try:
        root = data_dir or default_data_root()
        layout = DataLayout(root, resolve_game_name(root, game_name, must_exist=True))
    except LayoutError as exc:
        _fail(exc)
    records = read_metrics(layout.metrics_path)
    if not records:
        _fail(f"no finished generation is recorded in {layout.metrics_path}; train with `zeroforge run` first")
    hours = elapsed_hours(records, _run_start(ModelRegistry(layout.registry_dir)))
    rows = [{"generation": r.generation, "hours": round(h.hours, 3), "hours_estimated": h.estimated,
             "promoted": r.promoted, "anchor": r.anchor, "anchor_score": r.anchor_score,
             "anchor_ci": None if r.anchor_interval is None else [round(x, 4) for x in r.anchor_interval],
             "anchor_elo": None if r.anchor_elo is None else round(r.anchor_elo, 1),
             "oracle_raw": _rounded(r.oracle_raw, r.oracle_raw_ci_low, r.oracle_raw_ci_high),
             "oracle_search": _rounded(r.oracle_search, r.oracle_search_ci_low, r.oracle_search_ci_high),
             "oracle_raw_optimal": _rounded(r.oracle_raw_optimal, r.oracle_raw_optimal_ci_low,
                                            r.oracle_raw_optimal_ci_high),
             "oracle_search_optimal": _rounded(r.oracle_search_optimal, r.oracle_search_optimal_ci_low,
                                               r.oracle_search_optimal_ci_high),
             "oracle_positions": r.oracle_positions}
            for r, h in zip(records, hours)]
    if plot_path is not None:
        from flows.strength_plot import write_anchor_hours_plot

        try:
            written = write_anchor_hours_plot(records, plot_path, f"{layout.game_name}: anchor score over training",
                                              hours)
        except OSError as exc:
            _fail(f"cannot write the plot to {plot_path}: {exc}")
        if written is None:
            click.echo("note: no generation has an anchor match yet, so no plot was drawn", err=True)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table = []
    for row in rows:
        ci = row["anchor_ci"]
        table.append([str(row["generation"]), ("~" if row["hours_estimated"] else "") + f"{row['hours']:.2f}",
                      "yes" if row["promoted"] else "no", row["anchor"] or "-",
                      "-" if row["anchor_score"] is None else f"{row['anchor_score']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
                      if ci else f"{row['anchor_score']:.3f}",
                      "-" if row["anchor_elo"] is None else f"{row['anchor_elo']:+.0f}",
                      _percent(row["oracle_raw"]), _percent(row["oracle_search"])])
    click.echo(text_table(["generation", "hours", "promoted", "anchor", "score [95% CI]", "Elo", "oracle raw",
                           "oracle search"], table))


def _rounded(value: float | None, low: float | None, high: float | None) -> list[float] | None:
    """[rate, ci_low, ci_high] rounded to 4 places, None when not measured."""
    return None if value is None or low is None or high is None else [round(x, 4) for x in (value, low, high)]


def _percent(figure: list[float] | None) -> str:
    return "-" if figure is None else f"{100 * figure[0]:.1f}%"


@models.command("init")
@config_options
@click.option("--seed", type=click.IntRange(0, 2**31), default=0, show_default=True,
              help="Seed of the random initial weights.")
def init_command(game: str, config_file: Path | None, settings: tuple[str, ...], data_dir: Path | None,
                 seed: int) -> None:
    """Make the first model of GAME by hand: a random network of the configured size, registered as version
    000001 and made best (what `zeroforge run` does at its start). Does nothing when a best model exists."""
    from services.initial_model import ensure_initial_model

    cfg, root = load_pipeline_config(game, config_file, settings, data_dir)
    layout = DataLayout(root, cfg.game.name)
    try:
        before = ModelRegistry(layout.registry_dir).best_version() if layout.registry_dir.is_dir() else None
        best = ensure_initial_model(layout, cfg.game, seed)
    except (RegistryError, LayoutError) as exc:
        _fail(exc)
    if before is not None:
        click.echo(f"{cfg.game.name} already has a best model: {best}; nothing changed ({layout.registry_dir})")
    else:
        click.echo(f"registered a random {cfg.game.blocks}x{cfg.game.channels} network for {cfg.game.name} as "
                   f"{best} and made it best ({layout.registry_dir})")


@models.command("export")
@click.argument("version")
@click.option("--format", "fmt", type=click.Choice(["onnx"]), default="onnx", show_default=True,
              help="Export format.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), default=None, metavar="FILE",
              help="Output file [default: <game>-<version>.onnx in the current directory].")
@click.option("--game", "game_name", help="Game (default: the only game in the data dir; needed for shipped).")
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Data root (default: $ZEROFORGE_DATA_DIR, else ./zeroforge-data).")
@click.option("--json", "as_json", is_flag=True, help="Print the written metadata as JSON.")
@store_option
def export_command(version: str, fmt: str, output: Path | None, game_name: str | None, data_dir: Path | None,
                   as_json: bool, store_url: str | None) -> None:
    """Export VERSION (a registry version, best or shipped) to ONNX with its metadata (game, encoding, input
    shape, version, sha256 of the source model) and a dynamic batch axis."""
    from cli.play_common import user_errors
    from shared.games import make_game
    from shared.network.onnx_export import export_onnx
    from shared.players.analysis import choose_model

    if store_url is not None:
        with user_errors():
            store_game = make_game(game_name).name if game_name else None
        data_dir = sync_registry(store_url, data_dir, store_game, models=[version])
    with user_errors():
        root = data_dir or default_data_root()
        game = make_game(resolve_game_name(root, game_name))
        model = choose_model(game, version, DataLayout(root, game.name).registry_dir)
        if model.note:
            click.echo(f"note: {model.note}", err=True)
        label = model.version or ("shipped" if model.shipped else Path(model.path).stem)
        output = output or Path(f"{game.name}-{label}.{fmt}")
        metadata = export_onnx(model.path, output, game, version=label)
    if as_json:
        click.echo(json.dumps({"path": str(output), **metadata}, indent=2))
        return
    click.echo(f"wrote {output} ({output.stat().st_size / 1024:.0f} KiB): {game.name} {label}, input planes "
               f"{metadata['input_shape']} float32 -> logits [batch, {game.num_actions}], value [batch]; "
               f"source sha256 {metadata['source_sha256'][:16]}...")
