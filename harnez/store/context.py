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


Record = tuple[str, str | None, dict[str, Any]]
"""(role, wire, item) of one context record, its shared text filled in."""

KEEP_SESSIONS = 4
"""Sessions whose records `ContextRecords.items` keeps decoded between reads (the newest read)."""


class _Kept:
    """A session's records as last read: each one's id and time (`marks`: an id SQLite gave again to
    a new record after the old ones were deleted comes with another time) and their decoded items."""

    __slots__ = ("marks", "records")

    def __init__(self, marks: list[tuple[int, float]], records: list[Record]) -> None:
        self.marks, self.records = marks, records


class ContextRecords:
    """The conversation of a session, item by item, in order.

    Every task reads its session's whole conversation; a long session's records (decompressed,
    parsed, their shared texts read back from the events) took ~30 ms at 1,200 records, on the
    event loop, before each prompt's request. The records of the last `KEEP_SESSIONS` sessions read
    stay decoded, and a later read decodes only the records added since: it checks that the ids (and
    times) it kept are still the session's first ones (a record deleted, a session's number or a
    record's id reused after a delete, reads everything again). Records are only ever appended, or rewritten with the same
    content (`share_text`), so what was decoded stays true. Callers must not change the items.
    """

    def __init__(self, db: Database) -> None:
        self._db = db
        self._kept: dict[int, _Kept] = {}

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

    async def items(self, session_num: int) -> list[Record]:
        """(role, wire, item) of every record, oldest first (see the class: kept between reads)."""
        kept = self._kept.pop(session_num, None)
        after = kept.marks[-1][0] if kept is not None and kept.marks else 0
        rows = await self._db.fetchall(
            "SELECT id, created_at, role, wire, CASE WHEN id > ? THEN body END FROM context_records "
            "WHERE session = ? ORDER BY id",
            (after, session_num),
        )
        known = 0 if kept is None else len(kept.marks)
        if kept is not None and [(r[0], r[1]) for r in rows[:known]] != kept.marks:
            kept, known = None, 0
            rows = await self._db.fetchall(
                "SELECT id, created_at, role, wire, body FROM context_records WHERE session = ? ORDER BY id",
                (session_num,),
            )
        added = [(r[2], r[3], unpack(r[4])) for r in rows[known:]]
        texts = await self._event_texts(
            session_num, {seq for _, _, item in added if (seq := reference(item))}
        )
        for _, _, item in added:
            seq = reference(item)
            if seq is not None:
                item[SHARED[item["type"]][1]] = texts.get(seq, "")
        records = added if kept is None else kept.records + added
        self._kept[session_num] = _Kept([(r[0], r[1]) for r in rows], records)
        while len(self._kept) > KEEP_SESSIONS:
            del self._kept[next(iter(self._kept))]
        return list(records)

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
