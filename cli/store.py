"""`zeroforge store`: run and check the S3 store that lets workers on other machines share shards and models.

    zeroforge store serve --dir /srv/zeroforge-store [--host 0.0.0.0] [--port 8333] [--bucket zeroforge]
    zeroforge store check s3://zeroforge/run1
"""
from __future__ import annotations

import signal
import time
from pathlib import Path

import click


@click.group()
def store() -> None:
    """Run or check the object store (SeaweedFS or any S3 service) that workers on other hosts use."""


@store.command("serve")
@click.option("--dir", "directory", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Where the store keeps its objects and its keys (credentials.env, mode 0600); reuse it to restart.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address the S3 endpoint listens on: 127.0.0.1 for this host only, a LAN address or 0.0.0.0 for "
                   "workers on other hosts (the store's other services stay on 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), default=8333, show_default=True, help="The S3 port.")
@click.option("--bucket", default="zeroforge", show_default=True, help="The bucket to create and serve.")
def serve(directory: Path, host: str, port: int, bucket: str) -> None:
    """Serve an S3 store (SeaweedFS) until Ctrl-C; the keys are made on the first start and kept in DIR."""
    from services.store_server import StoreServerError, start_store_server
    from shared.store import StoreError

    try:
        server = start_store_server(directory, host=host, port=port, bucket=bucket)
    except (StoreServerError, StoreError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    click.echo(f"store: s3://{bucket} at {server.endpoint} (SeaweedFS, data in {server.directory / 'data'})")
    click.echo(f"keys: {server.credentials_path} (mode 0600). On each host of the deployment:\n"
               f"  set -a; . {server.credentials_path.name}; set +a     # a copy of that file, kept private\n"
               f"  zeroforge worker --store s3://{bucket}/RUN ...      # or zeroforge run --store s3://{bucket}/RUN")
    if host in ("0.0.0.0", "::"):
        click.echo(f"listening on every address: set AWS_ENDPOINT_URL to this host's address, port {port}, on the "
                   "other hosts")
    click.echo("Ctrl-C stops the store.")
    try:
        while all(p.poll() is None for p in server.processes):
            time.sleep(1)
        click.echo(f"the store server stopped on its own; see {server.log_path}", err=True)
        raise SystemExit(1)
    except KeyboardInterrupt:
        click.echo("stopping the store")
    finally:
        server.stop()


@store.command("check")
@click.argument("url")
def check(url: str) -> None:
    """Check that the store URL answers with the keys of this environment (AWS_*): lists it and says whose it is."""
    from shared.store import StoreError, open_store, store_identity

    try:
        backend = open_store(url, outage_s=10)
        objects = backend.list("")
        owner = store_identity(backend)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    size = sum(o.size for o in objects)
    click.echo(f"{backend.url}: reachable, {len(objects)} objects, {size / 1e6:.1f} MB; "
               + (f"belongs to deployment {owner}" if owner else "not claimed by a deployment yet"))
