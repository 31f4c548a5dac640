"""Imported sessions: a session of another harness written in one transaction, found again by its origin."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from harnez.events import Event, UserMessage
from harnez.redaction import redact
from harnez.store import documents
from harnez.store.context import pack
from harnez.store.db import Database
from harnez.store.documents import Document
from harnez.store.folding import TURN_MARKS, Row
from harnez.store.payloads import stored_payload
from harnez.store.sessions import new_session_id
from harnez.store.tasks import keep_prompts_in_events

IMPORTED_TITLE = "imported"
"""The `title_source` of a title that came with the session: automatic naming never replaces it."""


@dataclass(slots=True)
class ImportedTask:
    """A task of an imported session: one prompt and what followed it."""

    input: str
    state: str
    model: str | None
    error: str | None
    created_at: float
    finished_at: float
    turns: int


@dataclass(slots=True)
class ImportRecord:
    """Everything one imported session becomes. Events' and context records' `task` is the 1-based
    index of its task in `tasks` (None: before the first prompt)."""

    harness: str
    original_id: str
    agent_id: str
    parent_original_id: str | None
    source: str
    source_key: str
    fingerprint: str
    workspace: str
    title: str | None
    status: str
    created_at: float
    updated_at: float
    tasks: list[ImportedTask] = field(default_factory=list)
    events: list[tuple[Event, float]] = field(default_factory=list)
    context: list[tuple[str, int | None, dict[str, Any], str | None]] = field(default_factory=list)
    """(role, task, item, wire) of each context record."""
    model_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_executions: list[dict[str, Any]] = field(default_factory=list)
    review_starts: list[float] = field(default_factory=list)
    """When the session entered review mode (Codex): its review sub-agents started then."""


REVIEW_HARNESS, REVIEW_AGENT = "codex", "review"
"""The sub-agents whose parent is found by when they started (`ImportedSessions.link_reviews`)."""
REVIEW_WINDOW = 300.0
"""How long after its parent entered review mode a review sub-agent's rollout may start (seconds;
Codex starts it at once: the two times are the same to the millisecond in a real pair)."""
REVIEW_SKEW = 1.0
"""How much earlier than the review mode's start it may be stamped (two clocks, rounding)."""


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """What writing a record did: `imported` (new), `updated`, or `kept` (continued in Harnez since its
    import, so the source's newer records were not written over it)."""

    action: str
    session_id: str


@dataclass(slots=True)
class KnownImports:
    """Fingerprints by (harness, source, source key), and sources by (harness, original id, agent id)."""

    fingerprints: dict[tuple[str, str, str], set[str]] = field(default_factory=dict)
    sources: dict[tuple[str, str, str], str] = field(default_factory=dict)


class ImportedSessions:
    """Reads and writes of imported sessions."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def known(self) -> KnownImports:
        """What earlier imports wrote, read once before an import."""
        rows = await self._db.fetchall(
            "SELECT harness, source, source_key, fingerprint, original_id, agent_id FROM imported_sessions"
        )
        known = KnownImports()
        for harness, source, key, fingerprint, original_id, agent_id in rows:
            known.fingerprints.setdefault((harness, source, key), set()).add(fingerprint)
            known.sources[(harness, original_id, agent_id)] = source
        return known

    async def fingerprints(self, harness: str, source: str, source_key: str = "") -> set[str]:
        """The fingerprints stored for the sessions of one source (empty when none was imported)."""
        rows = await self._db.fetchall(
            "SELECT fingerprint FROM imported_sessions WHERE harness = ? AND source = ? AND source_key = ?",
            (harness, source, source_key),
        )
        return {row[0] for row in rows}

    async def source_of(self, harness: str, original_id: str, agent_id: str = "") -> str | None:
        """The source an imported session was last read from (None when it was never imported)."""
        row = await self._db.fetchone(
            "SELECT source FROM imported_sessions WHERE harness = ? AND original_id = ? AND agent_id = ?",
            (harness, original_id, agent_id),
        )
        return row[0] if row else None

    async def origin(self, session_num: int) -> dict[str, Any] | None:
        """Where an imported session came from (None for Harnez's own sessions)."""
        row = await self._db.fetchone(
            "SELECT harness, original_id, agent_id, parent_original_id, source, source_key, imported_at "
            "FROM imported_sessions WHERE session = ?",
            (session_num,),
        )
        if row is None:
            return None
        shares_parent_id = bool(row[2]) and row[3] == row[1]  # a Claude Code sub-agent: no one's parent
        return {
            "harness": row[0],
            "original_id": row[1],
            "agent_id": row[2] or None,
            "parent_original_id": row[3],
            "parent_session": await self._parent(session_num, row[0], row[3]),
            "children": [] if shares_parent_id else await self._children(session_num, row[0], row[1]),
            "source": row[4],
            "source_key": row[5] or None,
            "imported_at": row[6],
        }

    async def _parent(self, session_num: int, harness: str, parent: str | None) -> str | None:
        """The Harnez id of the imported session a sub-agent or fork came from, found by its original id
        when asked (so the link holds whichever of the two was imported first); its main session when
        sub-agents share its id (Claude Code)."""
        if parent is None:
            return None
        row = await self._db.fetchone(
            "SELECT s.id FROM imported_sessions i JOIN sessions s ON s.num = i.session "
            "WHERE i.harness = ? AND i.original_id = ? AND i.session != ? "
            "ORDER BY i.agent_id != '', i.agent_id LIMIT 1",
            (harness, parent, session_num),
        )
        return row[0] if row else None

    async def _children(self, session_num: int, harness: str, original_id: str) -> list[str]:
        """The Harnez ids of the imported sub-agents and forks whose parent is this session."""
        rows = await self._db.fetchall(
            "SELECT s.id FROM imported_sessions i JOIN sessions s ON s.num = i.session "
            "WHERE i.harness = ? AND i.parent_original_id = ? AND i.session != ? ORDER BY s.created_at, s.num",
            (harness, original_id, session_num),
        )
        return [row[0] for row in rows]

    async def link_reviews(self) -> int:
        """Give each imported review sub-agent that has no parent yet the session of its folder that
        entered review mode closest before it started (within `REVIEW_WINDOW`); run after every
        import, so the link is made whichever of the two was imported first. The number linked."""
        return await self._db.write(_link_reviews)

    async def write(self, record: ImportRecord) -> ImportOutcome:
        """Insert one session, or replace what an earlier import wrote of it."""
        return (await self.write_many([record]))[0]

    async def write_many(self, records: list[ImportRecord]) -> list[ImportOutcome]:
        """Insert the sessions, or replace what an earlier import wrote of them, in one transaction.

        Rows get their numbers here (inside BEGIN IMMEDIATE, so no other writer takes them), which
        lets every table be written with one statement for the whole batch.
        """
        return await self._db.write(partial(_write_many, records=records))


def _write_many(conn: sqlite3.Connection, records: list[ImportRecord]) -> list[ImportOutcome]:
    """`ImportedSessions.write_many`'s transaction, in the write thread."""
    found = _existing(conn, records)
    outcomes: list[ImportOutcome] = []
    fresh: list[tuple[int, ImportRecord]] = []
    replaced: list[tuple[int, ImportRecord]] = []
    next_num = (_one(conn, "SELECT COALESCE(MAX(num), 0) FROM sessions", ()))[0] + 1
    for record in records:
        existing = found.get((record.harness, record.original_id, record.agent_id))
        if existing is None:
            fresh.append((next_num, record))
            outcomes.append(ImportOutcome("imported", new_session_id()))
            next_num += 1
        elif existing[2] > existing[1]:  # events past the imported ones: continued in Harnez
            outcomes.append(ImportOutcome("kept", existing[3]))
        else:
            replaced.append((existing[0], record))
            outcomes.append(ImportOutcome("updated", existing[3]))
    ids = iter([o.session_id for o in outcomes if o.action == "imported"])
    _insert_sessions(conn, [(num, next(ids), record) for num, record in fresh])
    _clear(conn, replaced)
    _insert_contents(conn, fresh + replaced)
    return outcomes


def _link_reviews(conn: sqlite3.Connection) -> int:
    """`ImportedSessions.link_reviews`'s update, in the write thread."""
    links = conn.execute(
        "SELECT c.session, p.original_id FROM imported_sessions c"
        " JOIN sessions cs ON cs.num = c.session"
        " JOIN imported_reviews r ON r.started_at BETWEEN cs.created_at - ? AND cs.created_at + ?"
        " JOIN imported_sessions p ON p.session = r.session AND p.harness = c.harness AND p.session != c.session"
        " JOIN sessions ps ON ps.num = p.session AND ps.workspace = cs.workspace"
        " WHERE c.harness = ? AND c.agent_id = ? AND c.parent_original_id IS NULL"
        " ORDER BY c.session, abs(cs.created_at - r.started_at) DESC, p.original_id DESC",
        (REVIEW_WINDOW, REVIEW_SKEW, REVIEW_HARNESS, REVIEW_AGENT),
    ).fetchall()
    closest = dict(links)  # per child, the last row wins: the closest review start (then the lowest id)
    conn.executemany(
        "UPDATE imported_sessions SET parent_original_id = ? WHERE session = ?",
        [(parent, session) for session, parent in closest.items()],
    )
    return len(closest)


def _one(conn: sqlite3.Connection, sql: str, params: tuple) -> Any:
    return conn.execute(sql, params).fetchone()


def _existing(conn: sqlite3.Connection, records: list[ImportRecord]) -> dict[tuple, tuple]:
    """(harness, original id, agent id) → (session num, events imported, events now, session id)."""
    keys = [(r.harness, r.original_id, r.agent_id) for r in records]
    if not keys:
        return {}
    values = ", ".join("(?, ?, ?)" for _ in keys)
    rows = conn.execute(
        "SELECT i.harness, i.original_id, i.agent_id, i.session, i.imported_events, "
        "(SELECT COALESCE(MAX(seq), 0) FROM events e WHERE e.session = i.session), s.id "
        "FROM imported_sessions i JOIN sessions s ON s.num = i.session "
        f"WHERE (i.harness, i.original_id, i.agent_id) IN (VALUES {values})",
        [part for key in keys for part in key],
    ).fetchall()
    return {(r[0], r[1], r[2]): (r[3], r[4], r[5], r[6]) for r in rows}


def _insert_sessions(conn: sqlite3.Connection, fresh: list[tuple[int, str, ImportRecord]]) -> None:
    conn.executemany(
        "INSERT INTO sessions (num, id, workspace, title, title_source, naming_used, model, status, created_at, "
        "updated_at, origin) VALUES (?, ?, ?, ?, ?, 1, NULL, ?, ?, ?, ?)",
        [
            (
                num,
                session_id,
                r.workspace,
                r.title,
                IMPORTED_TITLE if r.title else None,
                r.status,
                r.created_at,
                r.updated_at,
                r.harness,
            )
            for num, session_id, r in fresh
        ],
    )
    docs = [Document(num, "workspace", None, r.workspace) for num, _, r in fresh]
    docs += [Document(num, "title", None, r.title) for num, _, r in fresh if r.title]
    documents.add(conn, docs)


def _clear(conn: sqlite3.Connection, replaced: list[tuple[int, ImportRecord]]) -> None:
    """Remove what an earlier import wrote of these sessions; a title the person gave is kept."""
    if not replaced:
        return
    nums = [num for num, _ in replaced]
    marks = ", ".join("?" for _ in nums)
    # The index forgets documents by the text they indexed: they go while their events are there.
    documents.remove(conn, f"session IN ({marks}) AND kind NOT IN ('title', 'workspace')", nums)
    for table in (
        "events",
        "live_deltas",
        "context_records",
        "model_calls",
        "tool_executions",
        "tasks",
        "imported_reviews",
    ):
        conn.execute(f"DELETE FROM {table} WHERE session IN ({marks})", nums)
    conn.executemany(
        "UPDATE sessions SET status = ?, created_at = ?, updated_at = ?, origin = ? WHERE num = ?",
        [(r.status, r.created_at, r.updated_at, r.harness, num) for num, r in replaced],
    )
    _retitle(conn, {num: r.title for num, r in replaced if r.title})


def _retitle(conn: sqlite3.Connection, titles: dict[int, str]) -> None:
    """Give re-imported sessions their source's title, unless the person named them."""
    marks = ", ".join("?" for _ in titles)
    nums = [
        row[0]
        for row in conn.execute(
            f"SELECT num FROM sessions WHERE num IN ({marks}) AND COALESCE(title_source, '') != 'user'",
            list(titles),
        ).fetchall()
    ]
    if not nums:
        return
    documents.remove(conn, f"session IN ({', '.join('?' for _ in nums)}) AND kind = 'title'", nums)
    conn.executemany(
        "UPDATE sessions SET title = ?, title_source = ? WHERE num = ?",
        [(titles[num], IMPORTED_TITLE, num) for num in nums],
    )
    documents.add(conn, [Document(num, "title", None, titles[num]) for num in nums])


@dataclass(slots=True)
class _Rows:
    """The rows of every table for a batch of imported sessions, gathered before one write per table."""

    next_task: int
    tasks: list[tuple] = field(default_factory=list)
    events: list[tuple] = field(default_factory=list)
    docs: list[Document] = field(default_factory=list)
    prompts: list[tuple[int, int, str]] = field(default_factory=list)
    """(seq, task, text) of each task's prompt: its input is kept in the event only."""
    context: list[tuple] = field(default_factory=list)
    origins: list[tuple] = field(default_factory=list)
    reviews: list[tuple[int, float]] = field(default_factory=list)
    ledgers: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"model_calls": [], "tool_executions": []}
    )

    def add(self, num: int, r: ImportRecord) -> None:
        """One session's rows (its tasks take the next free ids)."""
        task_ids = list(range(self.next_task, self.next_task + len(r.tasks)))
        self.next_task += len(r.tasks)
        self._add_tasks(num, r, task_ids)
        self._add_events(num, r, task_ids)
        self.context += [
            (num, _task(task, task_ids), role, wire, pack(item), r.updated_at)
            for role, task, item, wire in r.context
        ]
        for table, rows in (("model_calls", r.model_calls), ("tool_executions", r.tool_executions)):
            self.ledgers[table] += [
                {**row, "session": num, "task": _task(row["task"], task_ids)} for row in rows
            ]
        self.reviews += [(num, moment) for moment in r.review_starts]
        self.origins.append(
            (
                num,
                r.harness,
                r.original_id,
                r.agent_id,
                r.parent_original_id,
                r.source,
                r.source_key,
                r.fingerprint,
                len(r.events),
                time.time(),
            )
        )

    def _add_tasks(self, num: int, r: ImportRecord, task_ids: list[int]) -> None:
        self.tasks += [
            (
                task_id,
                num,
                t.state,
                redact(t.input),
                t.model,
                t.state,
                t.error and redact(t.error),
                t.created_at,
                t.created_at,
                t.finished_at,
                t.turns,
            )
            for task_id, t in zip(task_ids, r.tasks, strict=True)
        ]

    def _add_events(self, num: int, r: ImportRecord, task_ids: list[int]) -> None:
        turn: list[Row] = []
        for seq, (event, moment) in enumerate(r.events, 1):
            body, payload = stored_payload(event.body.to_payload(), event.kind)
            task = _task(event.task, task_ids)
            self.events.append((num, seq, task, event.kind, body, moment))
            if event.kind in TURN_MARKS:
                turn = []
            else:
                turn.append(Row(0, seq, event.kind, payload))
            if isinstance(event.body, UserMessage) and task is not None:
                self.prompts.append((seq, task, str(payload.get("text", ""))))
            if event.search_text and event.kind == "turn-completed":
                self.docs += documents.turn_documents(num, seq, turn, event.search_text)
            elif event.search_text:
                self.docs.append(documents.event_document(num, event.kind, seq, payload, event.search_text))


def _insert_contents(conn: sqlite3.Connection, sessions: list[tuple[int, ImportRecord]]) -> None:
    """Tasks, events, search documents, context records, ledgers and origins of the sessions."""
    rows = _Rows((_one(conn, "SELECT COALESCE(MAX(id), 0) FROM tasks", ()))[0] + 1)
    for num, record in sessions:
        rows.add(num, record)
    conn.executemany(
        "INSERT INTO tasks (id, session, state, input, model, stop_reason, error, created_at, started_at, "
        "finished_at, turns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows.tasks,
    )
    conn.executemany(
        "INSERT INTO events (session, seq, task, kind, payload, time) VALUES (?, ?, ?, ?, ?, ?)", rows.events
    )
    documents.add(conn, rows.docs)
    keep_prompts_in_events(conn, rows.prompts)
    conn.executemany(
        "INSERT INTO context_records (session, task, role, wire, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        rows.context,
    )
    for table, ledger in rows.ledgers.items():
        if ledger:
            names = list(ledger[0])
            conn.executemany(
                f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                [tuple(_scrubbed(row[n]) for n in names) for row in ledger],
            )
    conn.executemany("INSERT INTO imported_reviews (session, started_at) VALUES (?, ?)", rows.reviews)
    conn.executemany(
        "INSERT OR REPLACE INTO imported_sessions (session, harness, original_id, agent_id, parent_original_id, "
        "source, source_key, fingerprint, imported_events, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows.origins,
    )


def _scrubbed(value: Any) -> Any:
    return redact(value) if isinstance(value, str) else value


def _task(index: int | None, task_ids: list[int]) -> int | None:
    return task_ids[index - 1] if index else None
