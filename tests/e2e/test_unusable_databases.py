"""Database paths that cannot be used get one clear line and exit 2, never a traceback."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.helpers import answer
from tests.e2e.helpers import HARNEZ, HeadlessWorkspace


def _refused(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harnez: ") and "Traceback" not in result.stderr
    assert all(word in lines[0] for word in words), lines[0]


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Make a folder read-only for Harnez: a read-only bind mount as root (root ignores modes)."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    done = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("a read-only bind mount needs root with mount rights")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True, capture_output=True)
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


@pytest.mark.parametrize(
    "where", ["/dev/null", "folder", "/proc/harnez.sqlite", "/proc/1/nope/harnez.sqlite"]
)
def test_a_database_path_that_cannot_hold_a_database(
    headless: HeadlessWorkspace, tmp_path: Path, where: str
) -> None:
    path = str(tmp_path) if where == "folder" else where
    result = subprocess.run(
        [str(HARNEZ), "run", "--input", "hi"],
        cwd=headless.path,
        capture_output=True,
        text=True,
        env={**headless.env, "HARNEZ_DATABASE_PATH": path},
        timeout=30,
    )
    _refused(result, str(Path(path).parent))


def test_a_read_only_workspace(headless: HeadlessWorkspace) -> None:
    with read_only(headless.path / ".harnez"):
        _refused(headless.harnez("run", "--input", "hi", timeout=30), "harnez.sqlite", "writable")


def test_an_existing_read_only_database(headless: HeadlessWorkspace, tmp_path: Path) -> None:
    headless.model.add(answer("hello"))
    assert headless.harnez("run", "--input", "hi").returncode == 0
    with read_only(headless.path / ".harnez"):
        _refused(headless.harnez("sessions", timeout=30), "read-only")
        _refused(headless.harnez("run", "--resume", "latest", "--input", "again", timeout=30), "read-only")


def test_a_damaged_page_met_on_write(headless: HeadlessWorkspace) -> None:
    headless.model.add(answer("a long answer " * 2000), answer("second"))
    assert headless.harnez("run", "--input", "hi").returncode == 0
    database = headless.database
    with contextlib.closing(sqlite3.connect(database)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()
    size = 4096
    with open(database, "r+b") as file:  # scribble over the events table's root page
        file.seek((root - 1) * size)
        file.write(os.urandom(size))
    assert pages > root
    result = headless.harnez("run", "--resume", "latest", "--input", "again", timeout=30)
    _refused(result, "damaged", ".recover")
    shutil.rmtree(headless.path / ".harnez", ignore_errors=True)


def test_a_database_of_a_newer_harnez_is_refused_and_its_folder_left_as_it_was(
    headless: HeadlessWorkspace,
) -> None:
    headless.model.add(answer("first"))
    assert headless.harnez("run", "--input", "hello").returncode == 0
    db = sqlite3.connect(headless.database)
    with db:
        db.execute("INSERT INTO schema_migrations VALUES (99, '0099_future.sql', 0)")
    db.close()
    folder = headless.database.parent
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    assert not any(name.endswith(("-wal", "-shm")) for name in before)  # closed cleanly
    for args in (
        ("run", "--input", "again"),
        ("sessions",),
        ("events", "--session", "latest"),
        ("run", "--resume", "latest", "go"),
    ):
        _refused(headless.harnez(*args), "schema version 99", "newer Harnez", "was not changed")
        assert {path.name: path.read_bytes() for path in folder.iterdir()} == before, args
