"""Reading a run from its object store alone (`--store URL` on the commands that read data): one helper that
syncs a local replica of the pipeline's data directory, so the command then runs exactly its data-directory code.

The replica is --data-dir when given, else a cache directory per deployment (shared.layout.store_cache_root). It
takes the store's deployment identity (a directory of another deployment is refused), then holds what a command
reads: the store's shards of a game (`mirror_game_shards`), or the registry view of each game asked for, with
the model files the command plays or exports (`sync_registry`, shared.store.view, sha256-checked). Before each
sync the replica is bounded to `[pipeline] store_cache_gb` (shared.store.cache). Every store
problem (unreachable, missing bucket, wrong keys, another deployment, a changed object) is one line `error: ...`
and exit code 2.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import click

from cli.play_common import fail

STORE_HELP = ("The run's object store, s3://BUCKET/PREFIX or a directory (or ZEROFORGE_STORE; keys from the AWS_* "
              "variables): read the run from it through a local replica, in --data-dir when given, else in a cache "
              "directory per deployment.")


def store_option(func):
    """Add --store URL (envvar ZEROFORGE_STORE), passed as `store_url`."""
    return click.option("--store", "store_url", envvar="ZEROFORGE_STORE", default=None, metavar="URL",
                        help=STORE_HELP)(func)


def open_deployment(store_url: str):
    """(the store, its deployment identity, the games it holds data of); fail() when no deployment claimed it.
    StoreError for an unusable store."""
    from shared.store import open_store, store_identity
    from shared.store.replica import store_games

    store = open_store(store_url, outage_s=30)
    owner = store_identity(store)
    if owner is None:
        fail(f"the store {store.url} holds no zeroforge deployment yet; check the store URL, or start the pipeline "
             "with `zeroforge run --store ...` first")
    return store, owner, store_games(store)


def _open(store_url: str, data_dir: Path | None):
    """(the store, the replica's data root, the store's games): the store opened and checked, the root given the
    store's identity (--data-dir, else the deployment's cache directory)."""
    from shared.layout import adopt_data_id, store_cache_root

    store, owner, games = open_deployment(store_url)
    root = Path(data_dir) if data_dir is not None else store_cache_root(owner)
    if adopt_data_id(root, owner) != owner:
        fail(f"{root} belongs to another deployment than the store {store.url}; give another --data-dir")
    return store, root, games


def chosen_games(store, games: list[str], game_name: str | None, every_game: bool) -> list[str]:
    if game_name is not None:
        if game_name not in games:
            fail(f"the store {store.url} holds no data of game {game_name!r} (games: {', '.join(games) or 'none'}); "
                 "check --game")
        return [game_name]
    if every_game and games:
        return games
    if len(games) != 1:
        fail(f"the store {store.url} holds {', '.join(games) or 'no games'}; pick one with --game")
    return games


def mirror_game_shards(store_url: str, game_name: str | None, data_dir: Path | None) -> Path:
    """Fetch the store's shards of the game (default: the store's only game) that the replica lacks; returns the
    replica's data root."""
    from shared.layout import DataLayout, LayoutError
    from shared.store import StoreError
    from shared.store.replica import mirror_shards

    try:
        store, root, games = _open(store_url, data_dir)
        game = chosen_games(store, games, game_name, every_game=False)[0]
        _trim(root, game)
        fetched = mirror_shards(store, DataLayout(root, game))
    except (StoreError, LayoutError) as exc:
        fail(exc)
    if fetched:
        click.echo(f"fetched {fetched} shards from {store.url} into {root}", err=True)
    return root


def _trim(root: Path, game: str) -> None:
    """Bound the replica before a sync: `[pipeline] store_cache_gb` (from ZEROFORGE_PIPELINE__STORE_CACHE_GB or
    the defaults of `game`), shared.store.cache.trim_replica."""
    import os

    from shared.config import ConfigError, PipelineConfig, load_config
    from shared.store.cache import trim_replica

    try:
        limit_gb = load_config(PipelineConfig, game, None, os.environ, {}).pipeline.store_cache_gb
    except ConfigError as exc:
        fail(exc)
    trim_replica(root, int(limit_gb * 1e9))


def _model_versions(layout, models: Iterable[str | None]) -> list[str]:
    """The registry versions that the player specs `models` name (None and "best": the best version; file,
    shipped and fixed players name none)."""
    from shared.players.spec import parse_player_spec
    from shared.registry import ModelRegistry

    versions = []
    for text in models:
        spec = parse_player_spec(text) if text is not None and text.strip() else None
        if spec is None or spec.kind == "best":
            best = ModelRegistry(layout.registry_dir).best_version()
            versions += [best] if best else []
        elif spec.kind == "version":
            versions.append(spec.value)
    return list(dict.fromkeys(versions))


def sync_registry(store_url: str, data_dir: Path | None, game_name: str | None = None, *,
                  every_game: bool = False, models: Iterable[str | None] = ()) -> Path:
    """Materialise the store's registry view of the game (game_name; None: the store's only game, or with
    every_game each of its games) into the replica, then fetch the model files the player specs `models` name
    (None or "best": the best model); returns the replica's data root for the command to read."""
    from shared.layout import DataLayout, LayoutError
    from shared.players.spec import PlayerSpecError
    from shared.registry import RegistryError
    from shared.store import StoreError
    from shared.store.replica import fetch_model
    from shared.store.view import materialise_view

    try:
        store, root, games = _open(store_url, data_dir)
        chosen = chosen_games(store, games, game_name, every_game)
        _trim(root, chosen[0])
        for game in chosen:
            layout = DataLayout(root, game)
            materialise_view(store, layout)
            for version in _model_versions(layout, models):
                fetch_model(store, layout, version)
    except (StoreError, LayoutError, RegistryError, PlayerSpecError) as exc:
        fail(exc)
    return root
