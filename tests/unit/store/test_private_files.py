"""The database is private: folder 0700, database/WAL/SHM/backups 0600, loose ones tightened once."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnez.server import Server
from harnez.store import Store
from harnez.store.migrate import migrations_dir


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The umask most systems start with: new files 0644, new folders 0755."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.fixture
def project_db(tmp_path: Path) -> Path:
    return tmp_path / "project" / ".harnez" / "harnez.sqlite"


async def _touch_session(path: Path) -> Server:
    server = await Server.open(path)
    session = server.create_session(path.parent.parent)
    await server.rename(session.id, "private")
    await server.persist(session.id)
    return server


async def test_a_new_database_and_its_folder_are_readable_by_their_owner_only(project_db: Path) -> None:
    server = await _touch_session(project_db)
    try:
        files = [p for p in project_db.parent.iterdir() if p.name.startswith("harnez.sqlite")]
        assert {p.name for p in files} >= {"harnez.sqlite", "harnez.sqlite-wal", "harnez.sqlite-shm"}
        assert {p.name: _mode(p) for p in files} == {p.name: 0o600 for p in files}
        assert _mode(project_db.parent) == 0o700
        assert server.notices == []
    finally:
        await server.close()


async def test_loose_files_are_tightened_on_open_and_the_person_is_told_once(project_db: Path) -> None:
    await (await _touch_session(project_db)).close()
    project_db.parent.chmod(0o755)
    project_db.chmod(0o644)

    second = await Server.open(project_db)
    notices = second.notices
    await second.close()
    third = await Server.open(project_db)
    again = third.notices
    await third.close()

    assert len(notices) == 2 and "private" in notices[0] and "harnez.sqlite" in notices[1]
    assert again == []
    assert _mode(project_db) == 0o600 and _mode(project_db.parent) == 0o700


async def test_a_folder_that_is_not_harnez_own_is_left_as_it_is(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    server = await _touch_session(shared / "sessions.sqlite")
    await server.close()
    assert _mode(shared) == 0o755 and _mode(shared / "sessions.sqlite") == 0o600


async def test_a_migration_backup_is_private(tmp_path: Path, project_db: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    shutil.copy(migrations_dir() / "0001_initial.sql", first)
    await (await Store.open(project_db, migrations=first)).close()
    await (await Store.open(project_db)).close()
    [backup] = project_db.parent.glob("harnez.sqlite.v1-*.bak")
    assert _mode(backup) == 0o600
