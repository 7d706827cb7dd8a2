"""A new data directory's Prefect database, started from an empty one made earlier on this machine.

The first start of Prefect's temporary server on a data directory creates its database: it runs every schema
migration and registers Prefect's block types, which took 45 s of the 70 s before the first progress line on two
busy cores; on a database that has them it starts in 25 s. Both are the same for every data directory of one
Prefect version and hold no runs, so the first new database a version creates is copied, before any flow runs, to
`<cache>/zeroforge/prefect-<version>-empty.db` (cache: $XDG_CACHE_HOME, else ~/.cache), and a data directory
without a database starts from a copy of it. A copy that cannot be made or read is skipped: Prefect then creates
the database itself, as without this module.
"""
from __future__ import annotations

import logging
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

log = logging.getLogger(__name__)


def template_path(prefect_version: str, cache_dir: Path | None = None) -> Path:
    """Where the empty database of `prefect_version` is kept: <cache_dir or $XDG_CACHE_HOME or ~/.cache>/zeroforge/
    prefect-<version>-empty.db."""
    base = cache_dir or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Path(base) / "zeroforge" / f"prefect-{prefect_version}-empty.db"


def _is_migrated_database(path: Path) -> bool:
    """True when `path` is an SQLite database that records its schema version (Alembic's table) and has no runs."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            versions = db.execute("SELECT count(*) FROM alembic_version").fetchone()[0]
            runs = db.execute("SELECT count(*) FROM flow_run").fetchone()[0]
    except sqlite3.Error:
        return False
    return versions == 1 and runs == 0


def seed_database(database: Path, template: Path) -> bool:
    """Copy `template` to `database` when `database` does not exist and `template` is a migrated database without
    runs; returns whether it copied. Never raises: a failed copy leaves no file, and Prefect creates the database."""
    if database.exists() or not template.is_file() or not _is_migrated_database(template):
        return False
    partial = database.with_name(f".{database.name}.{os.getpid()}.tmp")
    try:
        database.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template, partial)
        os.replace(partial, database)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        log.info("could not copy the empty Prefect database %s (%s); Prefect creates it", template, exc)
        return False
    return True


def save_template(database: Path, template: Path) -> bool:
    """Keep a copy of `database` (a live Prefect database that has no runs yet) at `template`, through SQLite's
    backup API (a consistent copy while the server has it open), unless `template` exists; returns whether it
    saved one. Never raises."""
    if template.exists() or not _is_migrated_database(database):
        return False
    partial = template.with_name(f".{template.name}.{os.getpid()}.tmp")
    try:
        template.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as source, \
                closing(sqlite3.connect(partial)) as copy:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")   # one self-contained file (Prefect turns WAL on again)
        os.replace(partial, template)
    except (OSError, sqlite3.Error) as exc:
        partial.unlink(missing_ok=True)
        log.info("could not keep a copy of the empty Prefect database in %s (%s)", template, exc)
        return False
    return True
