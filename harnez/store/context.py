"""Context records: conversation items exactly as sent to or received from a provider, compressed;
a finished task's records point at the events that hold their text (harnez/store/records.py)."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from harnez.store.db import Database, inserted_id
from harnez.store.payloads import loads
from harnez.store.records import SHARED, event_text, pack, reference, share_plan, unpack

__all__ = ["ContextRecords", "pack", "share_text", "unpack"]


class ContextRecords:
    """The conversation of a session, item by item, in order."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def append(
        self, session_num: int, task: int | None, role: str, item: dict[str, Any], wire: str | None = None
    ) -> int:
        """Store one conversation item."""
        row = (session_num, task, role, wire, pack(item), time.time())
        return await self._db.write(
            lambda conn: inserted_id(
                conn.execute(
                    "INSERT INTO context_records (session, task, role, wire, body, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    row,
                )
            )
        )

    async def items(self, session_num: int) -> list[tuple[str, str | None, dict[str, Any]]]:
        """(role, wire, item) of every record, oldest first."""
        rows = await self._db.fetchall(
            "SELECT role, wire, body FROM context_records WHERE session = ? ORDER BY id", (session_num,)
        )
        items = [(r[0], r[1], unpack(r[2])) for r in rows]
        texts = await self._event_texts(
            session_num, {seq for _, _, item in items if (seq := reference(item))}
        )
        for _, _, item in items:
            seq = reference(item)
            if seq is not None:
                item[SHARED[item["type"]][1]] = texts.get(seq, "")
        return items

    async def _event_texts(self, session_num: int, seqs: set[int]) -> dict[int, str]:
        """The shared text of each event, by seq."""
        found: dict[int, str] = {}
        ordered = sorted(seqs)
        for start in range(0, len(ordered), 500):
            part = ordered[start : start + 500]
            rows = await self._db.fetchall(
                f"SELECT seq, kind, payload FROM events WHERE session = ? AND seq IN ({', '.join('?' for _ in part)})",
                (session_num, *part),
            )
            found.update({r[0]: event_text(r[1], loads(r[2])) for r in rows})
        return found


def share_text(conn: sqlite3.Connection, session_num: int, task: int) -> None:
    """Point a finished task's records at the events that hold their text (inside a write transaction)."""
    marks = ", ".join("?" for _ in SHARED)
    events = conn.execute(
        f"SELECT seq, kind, payload FROM events WHERE session = ? AND task = ? AND kind IN ({marks})",
        (session_num, task, *(kind for kind, _ in SHARED.values())),
    ).fetchall()
    records = conn.execute(
        "SELECT id, body FROM context_records WHERE session = ? AND task = ?", (session_num, task)
    ).fetchall()
    conn.executemany("UPDATE context_records SET body = ? WHERE id = ?", share_plan(records, events))
