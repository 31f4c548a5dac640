"""Transactions: concurrent tasks never write inside each other's transaction; nesting uses savepoints."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harnez.store.db import Database


async def test_concurrent_transactions_are_serialised_not_nested(db_path: Path) -> None:
    db = await Database.open(db_path)
    async with db.transaction() as conn:
        await conn.execute("CREATE TABLE t (task TEXT, n INTEGER)")

    async def writer(name: str) -> None:
        for n in range(20):
            async with db.transaction() as conn:
                await conn.execute("INSERT INTO t VALUES (?, ?)", (name, n))
                await asyncio.sleep(0)

    await asyncio.gather(writer("a"), writer("b"), writer("c"))
    rows = await db.fetchall("SELECT COUNT(*) FROM t")
    assert rows[0][0] == 60
    await db.close()


async def test_a_failed_transaction_rolls_back_only_its_own_writes(db_path: Path) -> None:
    db = await Database.open(db_path)
    async with db.transaction() as conn:
        await conn.execute("CREATE TABLE t (n INTEGER)")
    started = asyncio.Event()

    async def failing() -> None:
        async with db.transaction() as conn:
            await conn.execute("INSERT INTO t VALUES (1)")
            started.set()
            await asyncio.sleep(0.01)
            raise RuntimeError("boom")

    async def succeeding() -> None:
        await started.wait()
        async with db.transaction() as conn:
            await conn.execute("INSERT INTO t VALUES (2)")

    results = await asyncio.gather(failing(), succeeding(), return_exceptions=True)
    assert isinstance(results[0], RuntimeError) and results[1] is None
    assert [r[0] for r in await db.fetchall("SELECT n FROM t")] == [2]
    await db.close()


async def test_a_nested_transaction_is_a_savepoint_that_can_fail_alone(db_path: Path) -> None:
    db = await Database.open(db_path)
    async with db.transaction() as conn:
        await conn.execute("CREATE TABLE t (n INTEGER)")
    async with db.transaction() as conn:
        await conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ValueError):
            async with db.transaction() as inner:
                await inner.execute("INSERT INTO t VALUES (2)")
                raise ValueError("inner fails")
        await conn.execute("INSERT INTO t VALUES (3)")
    assert [r[0] for r in await db.fetchall("SELECT n FROM t ORDER BY n")] == [1, 3]
    await db.close()
