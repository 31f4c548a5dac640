"""The full-text index's documents: what each one indexes, added and removed with exactly that text.

`search_fts` is a contentless FTS5 table: it holds the index, never the text. `search_docs` says what
each document (an FTS rowid) indexes — a session's workspace or title, or the text of one stored
event — and keeps the text itself only when it differs from what its source says (`text` NULL
otherwise), so conversation text is on disk once. FTS5 forgets a contentless document only when told
the text it indexed; that text is derived from the source by the same code here when a document is
added and when it is removed, and a source that changes (a title) loses its document first.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

from harnez.redaction import redact
from harnez.store.folding import Row
from harnez.store.payloads import loads

log = logging.getLogger(__name__)

SEARCHED_FIELDS: dict[str, tuple[str, ...]] = {
    "user-message": ("text",),
    "prompt-queued": ("text",),
    "steering-delivered": ("text",),
    "shell-line": ("command", "output"),
    "text-delta": ("text",),
}
"""The fields of an event that its document indexes (joined by a line break); for other kinds, every
text field of the payload."""

SESSION_KINDS = ("workspace", "title")
"""Documents whose text is the session row's column of that name."""

Fetch = Callable[[str, Sequence[Any]], Awaitable[Iterable[Any]]]
"""A read: SQL and parameters in, rows out (`Database.fetchall`, or a write connection's)."""


@dataclass(frozen=True, slots=True)
class Document:
    """One document: its session, what it indexes (a session column, or the event at `seq`), its text."""

    session: int
    kind: str
    seq: int | None
    text: str
    kept: bool = False
    """Whether `search_docs` keeps the text (it is not what the source says)."""


def event_text(kind: str, payload: dict[str, Any]) -> str:
    """The text an event's document indexes, from its stored payload."""
    fields = SEARCHED_FIELDS.get(kind)
    if fields is None:
        return "\n".join(value for value in payload.values() if isinstance(value, str))
    return "\n".join(str(payload.get(name) or "") for name in fields)


def event_document(session: int, kind: str, seq: int, payload: dict[str, Any], search_text: str) -> Document:
    """The document of an event appended with `search_text` (kept only when the event says otherwise)."""
    wanted = redact(search_text)
    return Document(session, kind, seq, wanted, kept=wanted != event_text(kind, payload))


def turn_documents(session: int, end_seq: int, rows: list[Row], search_text: str) -> list[Document]:
    """The documents of a completed turn's text: one per stored text row of its last attempt when they
    add up to `search_text`, else one on the `turn-completed` event keeping the text."""
    wanted = redact(search_text)
    retried = [i for i, row in enumerate(rows) if row.kind == "turn-retried"]
    texts = [row for row in rows[retried[-1] + 1 if retried else 0 :] if row.kind == "text-delta"]
    if texts and "".join(row.text() for row in texts) == wanted:
        return [Document(session, row.kind, row.seq, row.text()) for row in texts]
    return [Document(session, "turn-completed", end_seq, wanted, kept=True)]


def fetch_with(conn: aiosqlite.Connection) -> Fetch:
    """Reads through a write connection (inside its transaction)."""

    async def fetch(sql: str, params: Sequence[Any]) -> list[Any]:
        async with conn.execute(sql, tuple(params)) as cursor:
            return list(await cursor.fetchall())

    return fetch


async def add(conn: aiosqlite.Connection, documents: Sequence[Document]) -> None:
    """Index documents (inside a write transaction: their ids follow the largest one)."""
    if not documents:
        return
    async with conn.execute("SELECT COALESCE(MAX(id), 0) FROM search_docs") as cursor:
        row = await cursor.fetchone()
    first = (row[0] if row else 0) + 1
    await conn.executemany(
        "INSERT INTO search_docs (id, session, kind, seq, text) VALUES (?, ?, ?, ?, ?)",
        [(first + i, d.session, d.kind, d.seq, d.text if d.kept else None) for i, d in enumerate(documents)],
    )
    await conn.executemany(
        "INSERT INTO search_fts (rowid, text) VALUES (?, ?)",
        [(first + i, d.text) for i, d in enumerate(documents)],
    )


async def remove(conn: aiosqlite.Connection, where: str, params: Sequence[Any]) -> None:
    """Forget the documents `WHERE {where}` (before their sources change or go)."""
    fetch = fetch_with(conn)
    rows = await fetch(f"SELECT id, session, kind, seq, text FROM search_docs WHERE {where}", params)
    texts = await texts_of(fetch, rows)
    await conn.executemany(
        "INSERT INTO search_fts (search_fts, rowid, text) VALUES ('delete', ?, ?)", list(texts.items())
    )
    await conn.execute(f"DELETE FROM search_docs WHERE {where}", tuple(params))


async def texts_of(fetch: Fetch, rows: Iterable[Any]) -> dict[int, str]:
    """The text of each document row (`id, session, kind, seq, text`), by id: kept, or from its source."""
    texts: dict[int, str] = {}
    of_sessions: list[Any] = []
    of_events: dict[int, list[Any]] = {}
    for row in rows:
        if row["text"] is not None:
            texts[row["id"]] = row["text"]
        elif row["kind"] in SESSION_KINDS:
            of_sessions.append(row)
        else:
            of_events.setdefault(row["session"], []).append(row)
    texts.update(await _session_texts(fetch, of_sessions))
    for session, docs in of_events.items():
        texts.update(await _event_texts(fetch, session, docs))
    return texts


async def _session_texts(fetch: Fetch, docs: list[Any]) -> dict[int, str]:
    select = "SELECT num, workspace, title FROM sessions WHERE num"
    sessions = await _sources(fetch, select, [], [d["session"] for d in docs], "num")
    found: dict[int, str] = {}
    for doc in docs:
        session = sessions.get(doc["session"])
        if session is not None and session[doc["kind"]] is not None:
            found[doc["id"]] = session[doc["kind"]]
    return found


async def _event_texts(fetch: Fetch, session: int, docs: list[Any]) -> dict[int, str]:
    select = "SELECT seq, kind, payload FROM events WHERE session = ? AND seq"
    events = await _sources(fetch, select, [session], [d["seq"] for d in docs], "seq")
    found: dict[int, str] = {}
    for doc in docs:
        event = events.get(doc["seq"])
        if event is None:
            log.warning("search document %s points at event %s, which is gone", doc["id"], doc["seq"])
            continue
        found[doc["id"]] = event_text(event["kind"], loads(event["payload"]))
    return found


async def _sources(fetch: Fetch, select: str, fixed: list[Any], keys: list[Any], key: str) -> dict[Any, Any]:
    """The rows of `{select} IN (keys)` by their `key` column, read in slices small enough for one statement."""
    found: dict[Any, Any] = {}
    for part in _parts(keys):
        marks = ", ".join("?" for _ in part)
        found.update({row[key]: row for row in await fetch(f"{select} IN ({marks})", [*fixed, *part])})
    return found


def _parts(rows: list[Any], size: int = 500) -> Iterable[list[Any]]:
    """Rows in slices small enough for one statement's parameters."""
    for start in range(0, len(rows), size):
        yield rows[start : start + size]
