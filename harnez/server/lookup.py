"""A session looked up before anything opens: `harnez --resume ID` refuses an id no session has before
the full-screen app starts (it opened, then closed with the error). Read-only, no store, no migration:
the app still opens the database properly once the id is known to be there."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path


def sessions_starting_with(database: Path, prefix: str) -> int | None:
    """How many sessions (0, 1 or 2: more) of `database` have an id starting with `prefix`; None when
    it cannot be read (it is locked, damaged or of another version: the app says so)."""
    if not database.is_file():
        return 0
    clean = prefix.lower()
    try:
        with contextlib.closing(sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)) as db:
            rows = db.execute(
                "SELECT id FROM sessions WHERE id >= ? AND id < ? LIMIT 2", (clean, clean + "g")
            ).fetchall()
    except sqlite3.Error:
        return None
    return len(rows)
