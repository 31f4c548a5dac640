"""A read whose caller is cancelled is stopped in the database's thread, not left running to its end."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harnez.store.db import Database
from harnez.store.readonly import ReadOnlyDatabase

SLOW = (
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 2000000000) SELECT count(*) FROM n"
)
"""Minutes of counting, even on a fast machine."""

GUARD = 60.0
"""Seconds after which a read still running means the cancelled one was never stopped (it takes minutes)."""


async def _cancel_and_read_again(reads: Database | ReadOnlyDatabase, pause: float) -> None:
    slow = asyncio.ensure_future(reads.fetchall(SLOW))
    await asyncio.sleep(pause)
    slow.cancel()
    done, _ = await asyncio.wait([slow], timeout=GUARD)
    assert slow in done and slow.cancelled()  # reported as cancelled, not as an error
    row = await asyncio.wait_for(reads.fetchone("SELECT 40 + 2"), GUARD)
    assert row is not None and row[0] == 42  # the connection is usable, and the next read not interrupted


@pytest.mark.parametrize("pause", [0.0, 0.3], ids=["before-it-starts", "while-it-runs"])
async def test_a_cancelled_read_of_the_database_is_stopped_and_the_next_one_runs(
    db_path: Path, pause: float
) -> None:
    db = await Database.open(db_path)
    try:
        await _cancel_and_read_again(db, pause)
        assert [tuple(row) for row in await db.fetchall("SELECT count(*) FROM sessions")] == [(0,)]
    finally:
        await db.close()


@pytest.mark.parametrize("pause", [0.0, 0.3], ids=["before-it-starts", "while-it-runs"])
async def test_a_cancelled_read_of_another_projects_database_is_stopped_too(
    db_path: Path, pause: float
) -> None:
    db = await Database.open(db_path)
    await db.close()
    reader = ReadOnlyDatabase(db_path, budget=3600)  # only the cancellation can stop it
    try:
        await _cancel_and_read_again(reader, pause)
    finally:
        reader.close()
