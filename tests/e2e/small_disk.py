"""Run `harnez` with a database that may grow by only a few pages: SQLite then answers "database or
disk is full" exactly as on a full disk (used by the storage failure tests).

    python small_disk.py PAGES harnez-arguments...
"""

from __future__ import annotations

import sqlite3
import sys

import aiosqlite

from harnez.store.db import Database
from harnez.store.writer import WriteThread

_connect = Database._connect
_connect_thread = WriteThread._connect


async def _limited(path):  # type: ignore[no-untyped-def]
    conn: aiosqlite.Connection = await _connect(path)
    async with conn.execute("PRAGMA page_count") as cursor:
        (pages,) = await cursor.fetchone()
    await conn.execute(f"PRAGMA max_page_count = {pages + int(sys.argv[1])}")
    return conn


def _limited_thread(self: WriteThread) -> sqlite3.Connection:
    """The connection of `Database.write`, limited alike when it is made."""
    fresh = self._conn is None
    conn = _connect_thread(self)
    if fresh:
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        conn.execute(f"PRAGMA max_page_count = {pages + int(sys.argv[1])}").fetchall()
    return conn


Database._connect = staticmethod(_limited)  # type: ignore[method-assign]
WriteThread._connect = _limited_thread  # type: ignore[method-assign]

if __name__ == "__main__":
    from harnez.cli import main

    sys.exit(main(sys.argv[2:]))
