"""Run `harnez` with a database that may grow by only a few pages: SQLite then answers "database or
disk is full" exactly as on a full disk (used by the storage failure tests; `growth_limits` also by
the TUI's).

    python small_disk.py PAGES harnez-arguments...
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import aiosqlite

from harnez.store.db import Database
from harnez.store.writer import WriteThread


def growth_limits(pages: int) -> list[tuple[Any, str, Any]]:
    """(owner, attribute, replacement) of the patches that let each new write or read connection, the
    write thread's included, grow the database by only `pages` pages."""
    connect, connect_thread = Database._connect, WriteThread._connect

    async def limited(path: Path) -> aiosqlite.Connection:
        conn = await connect(path)
        async with conn.execute("PRAGMA page_count") as cursor:
            row = await cursor.fetchone()
        assert row is not None
        await conn.execute(f"PRAGMA max_page_count = {row[0] + pages}")
        return conn

    def limited_thread(self: WriteThread) -> sqlite3.Connection:
        fresh = self._conn is None
        conn = connect_thread(self)
        if fresh:
            (count,) = conn.execute("PRAGMA page_count").fetchone()
            conn.execute(f"PRAGMA max_page_count = {count + pages}").fetchall()
        return conn

    return [(Database, "_connect", staticmethod(limited)), (WriteThread, "_connect", limited_thread)]


if __name__ == "__main__":
    for owner, attribute, replacement in growth_limits(int(sys.argv[1])):
        setattr(owner, attribute, replacement)
    from harnez.cli import main

    sys.exit(main(sys.argv[2:]))
