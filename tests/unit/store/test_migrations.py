"""Migrations: from blank, from the oldest schema with data kept, newer schemas refused, failures rolled back."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from harnez.errors import MigrationError, SchemaTooNewError
from harnez.store import Store
from harnez.store.migrate import load_migrations, migrate, migrations_dir, schema_version


def _versions(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    finally:
        conn.close()


def _only_first(tmp_path: Path) -> Path:
    folder = tmp_path / "first"
    folder.mkdir()
    shutil.copy(migrations_dir() / "0001_initial.sql", folder)
    return folder


def test_a_blank_database_gets_every_migration(db_path: Path) -> None:
    head = len(load_migrations())
    assert migrate(db_path) == head
    assert _versions(db_path) == list(range(1, head + 1))
    conn = sqlite3.connect(db_path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert {
        "sessions",
        "events",
        "tasks",
        "model_selections",
        "context_records",
        "model_calls",
        "tool_executions",
        "search_docs",
        "search_fts",
    } <= tables


def test_every_migration_file_is_numbered_in_order() -> None:
    names = [m.name for m in load_migrations()]
    assert names == sorted(names) and names[0] == "0001_initial.sql" and len(names) >= 2


async def test_upgrade_from_the_first_schema_keeps_data_and_takes_a_backup(
    tmp_path: Path, db_path: Path
) -> None:
    await (await Store.open(db_path, migrations=_only_first(tmp_path))).close()
    with sqlite3.connect(
        db_path
    ) as conn:  # a session and a task as version 1 wrote them (today's code writes newer columns)
        num = conn.execute(
            "INSERT INTO sessions (id, workspace, title, created_at, updated_at) VALUES (?, '/w', 'old session', 0, 0)",
            ("ab" * 16,),
        ).lastrowid
        conn.execute(
            "INSERT INTO search_docs (session, kind, text) VALUES (?, 'title', 'old session')", (num,)
        )
        task_id = conn.execute(
            "INSERT INTO tasks (session, state, input, model, runner_pid, created_at) "
            "VALUES (?, 'queued', 'hello', NULL, 1, 0)",
            (num,),
        ).lastrowid
    assert _versions(db_path) == [1]

    store = await Store.open(db_path)
    assert (await store.sessions.get("ab" * 16)).title == "old session"
    assert (await store.tasks.get(task_id)).input == "hello"
    assert [hit.session_num for hit in (await store.search.search("old sess")).hits] == [num]
    finished = await store.tasks.transition(task_id, "running")
    assert finished.state == "running"
    await store.close()
    assert _versions(db_path) == list(range(1, len(load_migrations()) + 1))
    backups = list(db_path.parent.glob("harnez.sqlite.v1-*.bak"))
    assert len(backups) == 1 and schema_version(backups[0]) == 1


def test_a_newer_schema_is_refused_and_never_written(db_path: Path) -> None:
    migrate(db_path)
    conn = sqlite3.connect(db_path)
    conn.execute("INSERT INTO schema_migrations VALUES (99, '0099_future.sql', 0)")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = db_path.read_bytes()
    with pytest.raises(SchemaTooNewError) as caught:
        migrate(db_path)
    message = str(caught.value)
    assert "99" in message and str(len(load_migrations())) in message and str(db_path) in message
    assert db_path.read_bytes() == before
    assert sorted(path.name for path in db_path.parent.iterdir()) == [db_path.name]  # no -wal, no -shm
    checkout = Path(__file__).resolve().parents[3]
    assert f"git -C {checkout} pull" in message, (
        "the tests run from an install of this checkout: say how to update it"
    )
    assert "pip install -U harnez" not in message


async def test_a_failing_migration_leaves_the_previous_version(tmp_path: Path, db_path: Path) -> None:
    folder = tmp_path / "broken"
    shutil.copytree(migrations_dir(), folder)
    head = len(load_migrations())
    (folder / f"{head + 1:04d}_broken.sql").write_text(
        "CREATE TABLE half_done (x INTEGER);\nINSERT INTO no_such_table VALUES (1);\n"
    )
    migrate(db_path)
    with pytest.raises(MigrationError) as caught:
        migrate(db_path, folder)
    assert f"stays at version {head}" in str(caught.value)
    assert _versions(db_path) == list(range(1, head + 1))
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'half_done'").fetchone() is None
    conn.close()


def test_a_file_that_is_not_a_database_gets_a_clear_error(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(MigrationError, match="not a Harnez database"):
        migrate(db_path)


def test_an_installed_wheel_finds_its_migrations(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    built = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path / "dist")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert {f"harnez/migrations/{m.name}" for m in load_migrations()} <= names
        archive.extractall(tmp_path / "site")
    probe = (
        "from harnez.store.migrate import migrations_dir, load_migrations; "
        "print(migrations_dir()); print(len(load_migrations()))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "site")},
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    folder, count = shown.stdout.split()
    assert Path(folder) == tmp_path / "site" / "harnez" / "migrations"
    assert int(count) == len(load_migrations())
