"""flows.prefect_template on real SQLite files: a new data directory's database starts from the kept empty one only
when that is a migrated database without runs, and a database with runs is never kept as the template."""
from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from flows.prefect_template import save_template, seed_database, template_path


def _database(path: Path, runs: int = 0) -> Path:
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE alembic_version (version_num TEXT)")
        db.execute("INSERT INTO alembic_version VALUES ('abc123')")
        db.execute("CREATE TABLE flow_run (id TEXT)")
        db.executemany("INSERT INTO flow_run VALUES (?)", [(str(i),) for i in range(runs)])
        db.commit()
    return path


def test_the_template_is_kept_once_and_seeds_only_a_missing_database(tmp_path: Path) -> None:
    template = template_path("3.9.1", tmp_path / "cache")
    assert template == tmp_path / "cache" / "zeroforge" / "prefect-3.9.1-empty.db"
    (tmp_path / "first").mkdir()
    live = _database(tmp_path / "first" / "prefect.db")
    assert save_template(live, template) and template.is_file()
    assert not save_template(live, template)                      # kept once
    new = tmp_path / "second" / "prefect.db"
    assert seed_database(new, template) and new.is_file()
    with closing(sqlite3.connect(new)) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [("abc123",)]
    assert not seed_database(new, template)                       # an existing database is left alone


def test_a_database_with_runs_or_a_damaged_template_is_never_used(tmp_path: Path) -> None:
    template = template_path("3.9.1", tmp_path / "cache")
    assert not save_template(_database(tmp_path / "used.db", runs=2), template) and not template.exists()
    template.parent.mkdir(parents=True)
    template.write_bytes(b"not a database")
    new = tmp_path / "data" / "prefect.db"
    assert not seed_database(new, template) and not new.exists()
