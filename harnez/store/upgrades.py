"""Migration steps written in Python, run inside a migration's transaction after its SQL statements.

Version 8 folds what earlier versions stored unfolded: every run of streamed deltas becomes one row
(harnez/store/folding.py), each answer's document points at its folded text instead of keeping a
copy, documents whose text an event or session row holds drop their copy, context records point at
the events holding their text, and each task's prompt is kept in its user-message event only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from harnez.store import documents
from harnez.store.folding import FOLDABLE, TURN_MARKS, Row, fold_plan
from harnez.store.payloads import loads
from harnez.store.records import SHARED, share_plan


def fold_existing(conn: sqlite3.Connection) -> None:
    """Version 8: fold every session's deltas, then drop the copies of text stored elsewhere."""
    conn.row_factory = sqlite3.Row
    try:
        for (session,) in conn.execute("SELECT num FROM sessions").fetchall():
            rows = _fold_session(conn, session)
            _point_answers_at_text(conn, session, rows)
            _share_context_text(conn, session)
        _drop_copies(conn)
        _keep_prompts_in_events(conn)
    finally:
        conn.row_factory = None


def _fold_session(conn: sqlite3.Connection, session: int) -> list[Row]:
    """Fold a session's runs of deltas; its rows as they are now (deltas decoded), oldest first."""
    found = conn.execute(
        "SELECT id, seq, kind, payload FROM events WHERE session = ? ORDER BY seq", (session,)
    )
    rows = [Row(r[0], r[1], r[2], loads(r[3]) if r[2] in FOLDABLE else None) for r in found]
    updates, gone = fold_plan(rows)
    conn.executemany("UPDATE events SET payload = ? WHERE id = ?", updates)
    conn.executemany("DELETE FROM events WHERE id = ?", [(row_id,) for row_id in gone])
    dropped = set(gone)
    return [row for row in rows if row.id not in dropped]


def _point_answers_at_text(conn: sqlite3.Connection, session: int, rows: list[Row]) -> None:
    """Each answer's document (kept on its `turn-completed` event) moves to the folded text row that
    holds the same text, and drops its copy; the index is unchanged (the same document, the same text)."""
    answers = conn.execute(
        "SELECT id, seq, text FROM search_docs WHERE session = ? AND kind = 'turn-completed'", (session,)
    ).fetchall()
    if not answers:
        return
    by_seq = {row.seq: i for i, row in enumerate(rows)}
    moves = []
    for doc_id, end_seq, text in answers:
        turn = _turn_before(rows, by_seq.get(end_seq))
        found = documents.turn_documents(session, end_seq, turn, text)
        if len(found) == 1 and not found[0].kept and found[0].text == text:
            moves.append((found[0].kind, found[0].seq, doc_id))
    conn.executemany("UPDATE search_docs SET kind = ?, seq = ?, text = NULL WHERE id = ?", moves)


def _share_context_text(conn: sqlite3.Connection, session: int) -> None:
    """Each task's context records point at the events that hold their text (as a task's end does)."""
    marks = ", ".join("?" for _ in SHARED)
    events: dict[int, list[Any]] = {}
    found = conn.execute(
        f"SELECT task, seq, kind, payload FROM events WHERE session = ? AND task IS NOT NULL AND kind IN ({marks})",
        (session, *(kind for kind, _ in SHARED.values())),
    )
    for task, *event in found:
        events.setdefault(task, []).append(event)
    records: dict[int, list[Any]] = {}
    for task, *record in conn.execute(
        "SELECT task, id, body FROM context_records WHERE session = ? AND task IS NOT NULL", (session,)
    ):
        records.setdefault(task, []).append(record)
    for task, of_task in records.items():
        conn.executemany(
            "UPDATE context_records SET body = ? WHERE id = ?", share_plan(of_task, events.get(task, []))
        )


def _turn_before(rows: list[Row], end: int | None) -> list[Row]:
    """The rows of the turn that ends at index `end`: those after its start (or its task's prompt)."""
    if end is None:
        return []
    start = end
    while start > 0 and rows[start - 1].kind not in TURN_MARKS:
        start -= 1
    return rows[start:end]


def _drop_copies(conn: sqlite3.Connection) -> None:
    """Documents whose text their session row or event holds keep no copy."""
    for column in documents.SESSION_KINDS:
        conn.execute(
            f"UPDATE search_docs SET text = NULL WHERE kind = '{column}' "
            f"AND text = (SELECT {column} FROM sessions WHERE num = search_docs.session)"
        )
    found = conn.execute(
        "SELECT d.id, d.text, e.kind, e.payload FROM search_docs d JOIN events e "
        "ON e.session = d.session AND e.seq = d.seq WHERE d.text IS NOT NULL AND d.kind = e.kind"
    )
    same = [(r[0],) for r in found if documents.event_text(r[2], loads(r[3])) == r[1]]
    conn.executemany("UPDATE search_docs SET text = NULL WHERE id = ?", same)


def _keep_prompts_in_events(conn: sqlite3.Connection) -> None:
    """Each task's prompt stays in its user-message event only (as `tasks.keep_prompts_in_events`)."""
    found = conn.execute(
        "SELECT seq, task, payload FROM events WHERE kind = 'user-message' AND task IS NOT NULL"
    )
    prompts = _prompts(found)
    conn.executemany("UPDATE tasks SET input = '', input_seq = ? WHERE id = ? AND input = ?", prompts)


def _prompts(rows: Iterable[Any]) -> list[tuple[int, int, str]]:
    """(seq, task, text) of each user-message that started a task (steering ones did not)."""
    found = []
    for seq, task, payload in rows:
        body = loads(payload)
        if body.get("mode") != "steering":
            found.append((seq, task, str(body.get("text", ""))))
    return found


STEPS: dict[int, Callable[[sqlite3.Connection], None]] = {8: fold_existing}
"""The Python step of a migration, by version."""

SHRINKS = frozenset({8})
"""Migrations that free much of an existing database: it is compacted (VACUUM) after them."""
