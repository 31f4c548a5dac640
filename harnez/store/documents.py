"""The full-text index's documents: what each one indexes, added and removed with exactly that text.

`search_fts` is a contentless FTS5 table: it holds the index, never the text. `search_docs` says what
each document (an FTS rowid) indexes — a session's workspace or title, or the text of one stored
event — and keeps the text itself only when it differs from what its source says (`text` NULL
otherwise), so conversation text is on disk once. FTS5 forgets a contentless document only when told
the text it indexed; that text is derived from the source by the same code here when a document is
added and when it is removed, and a source that changes (a title) loses its document first.

A `!command`'s output is indexed as `plain_output` leaves it, without the escape sequences it wrote
for a terminal (`\x1b[31merror` is the word `error`, not `31merror`); its event keeps the raw output,
so such a document keeps its text.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harnez.redaction import redact
from harnez.store.payloads import loads
from harnez.text import plain_output

if TYPE_CHECKING:
    import sqlite3

    from harnez.store.folding import Row  # folding imports the event vocabulary; a listing needs neither

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

TERMINAL_KINDS = frozenset({"shell-line"})
"""Events whose text holds what a command printed for a terminal: indexed as `plain_output` leaves it."""

SESSION_KINDS = ("workspace", "title")
"""Documents whose text is the session row's column of that name."""

Fetch = Callable[[str, Sequence[Any]], Awaitable[Iterable[Any]]]
"""A read: SQL and parameters in, rows out (`Database.fetchall`)."""


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
    """The text an event's document indexes unless it keeps its own, from its stored payload (raw: the
    documents of databases written before `TERMINAL_KINDS` indexed this, and are removed with it)."""
    fields = SEARCHED_FIELDS.get(kind)
    if fields is None:
        return "\n".join(value for value in payload.values() if isinstance(value, str))
    return "\n".join(str(payload.get(name) or "") for name in fields)


def event_document(session: int, kind: str, seq: int, payload: dict[str, Any], search_text: str) -> Document:
    """The document of an event appended with `search_text` (kept only when the event says otherwise);
    a command's output without its escape sequences."""
    wanted = redact(plain_output(search_text) if kind in TERMINAL_KINDS else search_text)
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


def add(conn: sqlite3.Connection, documents: Sequence[Document]) -> None:
    """Index documents (inside a write transaction: their ids follow the largest one)."""
    if not documents:
        return
    row = conn.execute("SELECT COALESCE(MAX(id), 0) FROM search_docs").fetchone()
    first = (row[0] if row else 0) + 1
    conn.executemany(
        "INSERT INTO search_docs (id, session, kind, seq, text) VALUES (?, ?, ?, ?, ?)",
        [(first + i, d.session, d.kind, d.seq, d.text if d.kept else None) for i, d in enumerate(documents)],
    )
    conn.executemany(
        "INSERT INTO search_fts (rowid, text) VALUES (?, ?)",
        [(first + i, d.text) for i, d in enumerate(documents)],
    )


def remove(conn: sqlite3.Connection, where: str, params: Sequence[Any]) -> None:
    """Forget the documents `WHERE {where}` (before their sources change or go)."""
    found = conn.execute(
        TEXTS.format(where=f"d.id IN (SELECT id FROM search_docs WHERE {where})"), tuple(params)
    ).fetchall()
    conn.executemany(
        "INSERT INTO search_fts (search_fts, rowid, text) VALUES ('delete', ?, ?)",
        list(texts_of(found).items()),
    )
    conn.execute(f"DELETE FROM search_docs WHERE {where}", tuple(params))


TEXTS = (
    "SELECT d.id, d.kind, d.seq, d.text, e.kind AS event_kind, e.payload, s.workspace, s.title "
    "FROM search_docs d "
    "LEFT JOIN events e ON d.text IS NULL AND d.seq IS NOT NULL AND e.session = d.session AND e.seq = d.seq "
    "LEFT JOIN sessions s ON d.text IS NULL AND d.seq IS NULL AND s.num = d.session "
    "WHERE {where}"
)
"""Each document with the text it indexes, wherever that is kept: one statement, whatever the sources."""


async def texts_where(fetch: Fetch, where: str, params: Sequence[Any]) -> dict[int, str]:
    """The text of each document `WHERE {where}` (`d` is search_docs), by id."""
    return texts_of(await fetch(TEXTS.format(where=where), params))


def texts_of(rows: Iterable[Any]) -> dict[int, str]:
    """The text of each document of `TEXTS` rows, by id (a document whose source is gone has none)."""
    texts: dict[int, str] = {}
    for row in rows:
        text = _text(row)
        if text is not None:
            texts[row["id"]] = text
    return texts


def _text(row: Any) -> str | None:
    """A document's text from its `TEXTS` row (None: its source is gone)."""
    if row["text"] is not None:
        return str(row["text"])
    if row["kind"] in SESSION_KINDS:
        return row[row["kind"]]
    if row["payload"] is None:
        log.warning("search document %s points at event %s, which is gone", row["id"], row["seq"])
        return None
    return event_text(row["event_kind"], loads(row["payload"]))
