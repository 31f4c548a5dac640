"""The event log: sequence numbers assigned at commit, group-committed appends, reads after a cursor."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from harnez.errors import StoreBusyError, StoreWriteError
from harnez.events import (
    Event,
    EventBody,
    StoredEvent,
    TextDelta,
    TitleChanged,
    UserMessage,
    WarningEvent,
    body_from_payload,
)
from harnez.store import documents
from harnez.store.context import share_text
from harnez.store.db import Database, write_failure
from harnez.store.documents import Document
from harnez.store.folding import FOLDABLE, expand, fold_turn
from harnez.store.payloads import loads, stored_payload
from harnez.store.tasks import keep_prompts_in_events

log = logging.getLogger(__name__)

FLUSH_INTERVAL = 0.02
"""Seconds an append may wait for its group commit: the most a crash can lose (SPEC: ≤ 50 ms)."""

HIGH_WATER = 2000
"""Pending appends past which `backpressure()` makes a producer wait for a commit."""

BUSY_RETRY_FOR = 30.0
"""Seconds a batch keeps retrying while another process holds the write lock, before failing."""
BUSY_BACKOFF = (0.05, 2.0)
"""First and longest pause between those attempts (doubling)."""

TURN_ENDS = frozenset({"turn-completed", "finished"})
"""Events after which a turn's deltas are folded (a task's end folds a turn a crash cut short)."""

_COLUMNS = "seq, task, kind, payload, time"

_LIVE = f"SELECT {_COLUMNS} FROM live_deltas WHERE session = ?"
"""The live deltas of a session (streamed in a turn not yet ended), to read beside its events."""

_LAST_SEQ = (
    "SELECT MAX(COALESCE((SELECT MAX(seq) FROM events WHERE session = ?), 0), "
    "COALESCE((SELECT MAX(seq) FROM live_deltas WHERE session = ?), 0))"
)


@dataclass(slots=True)
class _Pending:
    session_num: int
    session_id: str
    event: Event
    time: float
    done: asyncio.Future[StoredEvent]
    first_words: bool = False
    """An answer's first text after other events of its session: committed in a batch it ends."""


@dataclass(slots=True)
class _Batch:
    """What one group commit writes besides its event rows."""

    rows: list[tuple] = field(default_factory=list)
    live: list[tuple] = field(default_factory=list)
    """Rows of streamed deltas: they wait in `live_deltas` until their turn ends (harnez/store/folding.py)."""
    documents: list[Document] = field(default_factory=list)
    turn_ends: list[tuple[int, int, str | None]] = field(default_factory=list)
    """(session, seq, search text) of each turn-completed or finished event."""
    prompts: list[tuple[int, int, str]] = field(default_factory=list)
    """(seq, task, text) of each prompt that started a task: the task's input is kept there only."""
    finished: list[tuple[int, int]] = field(default_factory=list)
    """(session, task) of each task that finished: its context records share its events' text."""
    touched: dict[int, float] = field(default_factory=dict)


def _is_activity(body: object) -> bool:
    """Whether an event moves its session's `updated_at`. A title landing in the background (or failing
    to, or a rename) is not activity: it must not move the session in recent order, e.g. between two
    pages of a listing."""
    if isinstance(body, WarningEvent):
        return body.code != "title-failed"
    return not isinstance(body, TitleChanged)


def _row_events(session_id: str, row: Any) -> list[StoredEvent]:
    """The events a row stands for: one, or each delta of a folded run."""
    return expand(session_id, row, loads(row["payload"]))


def _mark_seen(future: asyncio.Future[StoredEvent]) -> None:
    """Mark a failed append's error as handled: the failure is reported through `on_failure` (and to
    whoever awaits), not as "exception never retrieved" noise for every event a producer let go."""
    if not future.cancelled():
        future.exception()


def _first_words_first(pending: list[_Pending]) -> tuple[list[_Pending], list[_Pending]]:
    """The next batch to commit, and what waits for the commit after it: a batch ends with an answer's
    first words. A model that sends a whole turn at once (a short answer) had its first words
    committed with the turn's end, whose fold and index made that commit the slowest of the turn."""
    for index, waiting in enumerate(pending[:-1]):
        if waiting.first_words:
            return pending[: index + 1], pending[index + 1 :]
    return pending, []


def _settle_all(batch: list[_Pending], exc: BaseException) -> None:
    for p in batch:
        if not p.done.done():
            p.done.set_exception(exc)


def _prepare(p: _Pending, next_seq: dict[int, int], written: _Batch) -> StoredEvent:
    """Number one pending event, add its row (and what else it brings) to the batch; its stored form."""
    seq = next_seq[p.session_num]
    next_seq[p.session_num] = seq + 1
    e = p.event
    original = e.body.to_payload()
    packed, payload = stored_payload(original, e.kind)
    (written.live if e.kind in FOLDABLE else written.rows).append(
        (p.session_num, seq, e.task, e.kind, packed, p.time)
    )
    if _is_activity(e.body):
        written.touched[p.session_num] = p.time
    if e.kind == "finished" and e.task is not None:
        written.finished.append((p.session_num, e.task))
    if e.kind in TURN_ENDS:
        written.turn_ends.append((p.session_num, seq, e.search_text if e.kind == "turn-completed" else None))
    elif e.search_text:
        written.documents.append(documents.event_document(p.session_num, e.kind, seq, payload, e.search_text))
    if isinstance(e.body, UserMessage) and e.body.mode != "steering" and e.task is not None:
        written.prompts.append((seq, e.task, str(payload.get("text", ""))))
    body = e.body if payload is original else body_from_payload(e.kind, payload)
    return StoredEvent(p.session_id, seq, e.task, p.time, body)


def _write_batch(conn: sqlite3.Connection, batch: list[_Pending]) -> list[StoredEvent]:
    """Number and write a batch (in the write thread, inside its transaction); the stored events."""
    next_seq = _next_seqs(conn, {p.session_num for p in batch})
    written = _Batch()
    stored = [_prepare(p, next_seq, written) for p in batch]
    if written.rows:
        conn.executemany(
            "INSERT INTO events (session, seq, task, kind, payload, time) VALUES (?, ?, ?, ?, ?, ?)",
            written.rows,
        )
    if written.live:
        conn.executemany(
            "INSERT INTO live_deltas (session, seq, task, kind, payload, time) VALUES (?, ?, ?, ?, ?, ?)",
            written.live,
        )
    _after_insert(conn, written)
    if written.touched:
        conn.executemany(
            "UPDATE sessions SET updated_at = ? WHERE num = ?",
            [(t, num) for num, t in written.touched.items()],
        )
    return stored


def _next_seqs(conn: sqlite3.Connection, sessions: set[int]) -> dict[int, int]:
    # Read inside BEGIN IMMEDIATE: another process cannot append between this read and our insert.
    return {num: conn.execute(_LAST_SEQ, (num, num)).fetchone()[0] + 1 for num in sessions}


def _after_insert(conn: sqlite3.Connection, written: _Batch) -> None:
    """Fold the turns that ended, index what is searchable, keep each task's prompt in its event only,
    and let each finished task's context records point at its events' text."""
    docs = written.documents
    for session_num, seq, search_text in written.turn_ends:
        rows = fold_turn(conn, session_num, seq)
        if search_text:
            docs += documents.turn_documents(session_num, seq, rows, search_text)
    documents.add(conn, docs)
    keep_prompts_in_events(conn, written.prompts)
    for session_num, task in written.finished:
        share_text(conn, session_num, task)


@dataclass(slots=True)
class UsageSums:
    """Token and cost sums of a session's usage and cost events (`usd` None when none was priced).

    SQLite's JSON functions cannot read payloads stored compressed (never the case for these small
    events, but possible): those are handed back decoded in `packed`, for the caller to add in.
    """

    input: int = 0
    output: int = 0
    usd: float | None = None
    unpriced: int = 0
    """How many cost events had no price."""
    calls: int = 0
    """How many model calls (one cost event each)."""
    reported: int = 0
    """How many calls' usage the provider reported (a usage event with tokens)."""
    packed: list[EventBody] = field(default_factory=list)
    """The bodies of the events the sums above leave out."""


class EventLog:
    """Appends events in batches (one transaction per batch) and reads them back by cursor."""

    def __init__(
        self,
        db: Database,
        on_commit: Callable[[list[StoredEvent]], None] | None = None,
        flush_interval: float = FLUSH_INTERVAL,
        on_failure: Callable[[StoreWriteError], None] | None = None,
    ) -> None:
        self._db = db
        self._on_commit = on_commit
        self.on_failure = on_failure
        """Told once when saving fails for good (the server ends its tasks and subscriptions)."""
        self.failure: StoreWriteError | None = None
        """Why saving stopped; once set, every append fails at once with it."""
        self._interval = flush_interval
        self._pending: list[_Pending] = []
        self._wake = asyncio.Event()
        self._hurry = asyncio.Event()
        self._answering: set[int] = set()
        """Sessions whose last appended event was answer text (a first one after others hurries)."""
        self._flusher: asyncio.Task[None] | None = None
        self._flush_lock = asyncio.Lock()
        self._commits: set[asyncio.Future[None]] = set()
        self._soon: asyncio.Future[None] | None = None

    def start(self) -> None:
        """Start the background group-commit task."""
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._run(), name="harnez-event-flusher")

    async def stop(self) -> None:
        """Commit what is pending and stop the background task."""
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
            self._flusher = None
        await self.flush()
        await asyncio.gather(*self._commits, return_exceptions=True)

    def append(self, session_num: int, session_id: str, event: Event) -> asyncio.Future[StoredEvent]:
        """Queue an event; the future resolves with its stored form once committed.

        A producer need not await the future: a batch that cannot be committed is retried, and when
        saving fails for good, `on_failure` ends the work loudly (nothing vanishes silently).
        """
        done: asyncio.Future[StoredEvent] = asyncio.get_running_loop().create_future()
        done.add_done_callback(_mark_seen)
        if self.failure is not None:
            done.set_exception(self.failure)
            return done
        first_words = self._first_words(session_num, event)
        self._pending.append(_Pending(session_num, session_id, event, time.time(), done, first_words))
        # Committed without waiting out the interval: an answer's first words (what a person waits
        # for after Enter), and anything but a streamed delta (a task's start, a turn's, a tool call,
        # an end: a few a turn, each awaited by a person or by the next event's commit, which queues
        # behind it). Deltas after the first are gathered: they come in bursts.
        if first_words or event.body.kind not in FOLDABLE:
            self._hurry.set()
            self._commit_soon()
        self._wake.set()
        return done

    def _commit_soon(self) -> None:
        """Start committing what is pending now, in a task of its own: one turn of the event loop
        before the commit is handed to the write thread, not two (waking the flusher, which then
        starts a commit task), each of which waits for whatever the TUI is doing. A commit already
        on its way takes what is pending when it gets there; the flusher, told to hurry, is the
        backstop for an append that comes as that commit ends."""
        if self._flusher is None or (self._soon is not None and not self._soon.done()):
            return
        soon = self._soon = asyncio.ensure_future(self._commit_pending())
        self._commits.add(soon)
        soon.add_done_callback(self._commits.discard)

    async def _commit_pending(self) -> None:
        """Commit every pending event (nobody cancels this task: `stop` waits for it)."""
        async with self._flush_lock:
            while self._pending:
                batch, self._pending = _first_words_first(self._pending)
                await self._commit_batch(batch)

    def _first_words(self, session_num: int, event: Event) -> bool:
        """Whether `event` is an answer's first text after other events of its session."""
        if not isinstance(event.body, TextDelta):
            self._answering.discard(session_num)
            return False
        first = session_num not in self._answering
        self._answering.add(session_num)
        return first

    async def backpressure(self) -> None:
        """Wait for a commit when too much is pending; a fast producer calls this between appends.

        Without it, a producer that never lets the event loop idle starves the commits and the
        pending list (and the crash-loss window) grows without bound.
        """
        if len(self._pending) >= HIGH_WATER:
            await self.flush()

    async def append_now(self, session_num: int, session_id: str, event: Event) -> StoredEvent:
        """Append and wait for the commit."""
        return await self.append(session_num, session_id, event)

    async def append_many(
        self, session_num: int, session_id: str, events: Sequence[Event]
    ) -> list[StoredEvent]:
        """Append many events in one transaction (bulk import) and wait for them."""
        futures = [self.append(session_num, session_id, event) for event in events]
        await self.flush()
        return [f.result() for f in futures]

    async def _run(self) -> None:
        """Commit at most once an interval: the first append after a quiet interval at once (a
        prompt's user message), later ones gathered until an interval after the commit before; an
        event that hurries (`append`: all but streamed deltas, and an answer's first words) at
        once. No event waits longer than an interval either way."""
        last_commit = -math.inf
        while True:
            await self._wake.wait()
            delay = max(0.0, last_commit + self._interval - time.monotonic())
            if delay and not self._hurry.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._hurry.wait(), delay)
            self._hurry.clear()
            self._wake.clear()
            last_commit = time.monotonic()
            try:
                await self.flush()
            except Exception:
                log.exception("group commit failed")

    async def flush(self) -> None:
        """Commit every pending event now.

        A batch, once taken, is committed even if the caller is cancelled meanwhile (it runs
        shielded in its own task), so cancelling a producer or closing never loses events.
        """
        async with self._flush_lock:
            while self._pending:
                batch, self._pending = _first_words_first(self._pending)
                commit = asyncio.ensure_future(self._commit_batch(batch))
                self._commits.add(commit)
                commit.add_done_callback(self._commits.discard)
                await asyncio.shield(commit)

    async def _commit_batch(self, batch: list[_Pending]) -> None:
        if self.failure is not None:
            _settle_all(batch, self.failure)
            return
        try:
            stored = await self._write_patiently(batch)
        except StoreWriteError as exc:
            self._fail(exc, batch)
            return
        except Exception as exc:
            # A session deleted while its events waited (foreign key): its events go, the others stay.
            if len({p.session_num for p in batch}) == 1:
                _settle_all(batch, exc)
                return
            by_session: dict[int, list[_Pending]] = defaultdict(list)
            for p in batch:
                by_session[p.session_num].append(p)
            for part in by_session.values():
                await self._commit_batch(part)
            return
        for p, event in zip(batch, stored, strict=True):
            if not p.done.done():
                p.done.set_result(event)
        if self._on_commit is not None:
            self._on_commit(stored)

    async def _write_patiently(self, batch: list[_Pending]) -> list[StoredEvent]:
        """Write a batch; while another process holds the write lock, retry with back-off."""
        pause, started = BUSY_BACKOFF[0], time.monotonic()
        while True:
            try:
                return await self._write(batch)
            except StoreBusyError as exc:
                if time.monotonic() - started + pause > BUSY_RETRY_FOR:
                    raise write_failure(self._db.path, exc) from exc
                log.debug("the database is locked by another process; retrying in %.2f s", pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, BUSY_BACKOFF[1])

    def _fail(self, failure: StoreWriteError, batch: list[_Pending]) -> None:
        _settle_all(batch, failure)
        self.fail(failure)

    def fail(self, failure: StoreWriteError) -> None:
        """Saving failed for good (here or in any other write): fail everything pending and every later
        append, and tell `on_failure` once. The first failure is the one reported."""
        if self.failure is not None:
            return
        self.failure = failure
        waiting, self._pending = self._pending, []
        _settle_all(waiting, failure)
        if self.on_failure is not None:
            self.on_failure(failure)

    async def _write(self, batch: list[_Pending]) -> list[StoredEvent]:
        # One trip to the write thread for the whole transaction (harnez/store/writer.py): each trip back
        # through the event loop waits for whatever the TUI is doing then.
        return await self._db.write(partial(_write_batch, batch=batch))

    async def read_after(
        self, session_num: int, session_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """Stored events with seq > after, oldest first (a folded run expanded into its deltas: a
        cursor inside it gets the deltas after the cursor)."""
        sql = f"SELECT {_COLUMNS} FROM events WHERE session = ? AND seq > ? UNION ALL {_LIVE} AND seq > ? ORDER BY seq"
        params: tuple = (session_num, after, session_num, after)
        if limit is not None:
            sql += " LIMIT ?"
            params += (limit,)
        rows = await self._db.fetchall(sql, params)
        events = [event for row in rows for event in _row_events(session_id, row)]
        skip = 0
        while skip < len(events) and events[skip].seq <= after:
            skip += 1
        return events[skip : None if limit is None else skip + limit]

    async def read_before(
        self, session_num: int, session_id: str, before: int, limit: int
    ) -> list[StoredEvent]:
        """Up to `limit` stored events with seq < before, oldest first (for scrolling back); the row at or
        after `before` is read too, in case it is a folded run that began before it; live deltas are never
        folded runs."""
        rows = await self._db.fetchall(
            f"SELECT * FROM (SELECT {_COLUMNS} FROM events WHERE session = ? AND seq >= ? ORDER BY seq LIMIT 1) "
            f"UNION ALL SELECT * FROM (SELECT {_COLUMNS} FROM events WHERE session = ? AND seq < ? "
            f"ORDER BY seq DESC LIMIT ?) UNION ALL SELECT * FROM ({_LIVE} AND seq < ? ORDER BY seq DESC LIMIT ?)",
            (session_num, before, session_num, before, limit, session_num, before, limit),
        )
        older = sorted((r for r in rows if r["seq"] < before), key=lambda r: r["seq"])
        events = [event for row in older for event in _row_events(session_id, row)]
        for row in rows:
            if row["seq"] >= before and row["kind"] in FOLDABLE:
                events += [event for event in _row_events(session_id, row) if event.seq < before]
        return events[-limit:] if limit > 0 else []

    async def read_kinds(
        self, session_num: int, session_id: str, kinds: Sequence[str], up_to: int | None = None
    ) -> list[StoredEvent]:
        """A session's events of the given kinds (seq ≤ up_to when given), oldest first.

        Used for session totals (usage, cost): a scan of the session's rows, meant for a worker.
        """
        marks = ", ".join("?" for _ in kinds)
        where, params = f"session = ? AND kind IN ({marks})", (session_num, *kinds)
        if up_to is not None:
            where, params = f"{where} AND seq <= ?", (*params, up_to)
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM events WHERE {where} UNION ALL "
            f"SELECT {_COLUMNS} FROM live_deltas WHERE {where} ORDER BY seq",
            params + params,
        )
        return [event for row in rows for event in _row_events(session_id, row)]

    async def newest_of_kinds(
        self, session_num: int, session_id: str, kinds: Sequence[str], before: int, limit: int
    ) -> list[StoredEvent]:
        """A session's newest `limit` events of the given kinds with seq < before, oldest first (kinds
        that are never folded: a prompt history read past the events shown)."""
        marks = ", ".join("?" for _ in kinds)
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM events WHERE session = ? AND seq < ? AND kind IN ({marks}) "
            "ORDER BY seq DESC LIMIT ?",
            (session_num, before, *kinds, limit),
        )
        return [event for row in reversed(rows) for event in _row_events(session_id, row)]

    async def usage_sums(self, session_num: int, up_to: int | None = None) -> UsageSums:
        """Sums over a session's `usage` and `cost` events, computed by SQLite in the reader thread."""
        bound, params = ("AND seq <= ?", (session_num, up_to)) if up_to is not None else ("", (session_num,))
        row = await self._db.fetchone(
            "SELECT COALESCE(SUM(CASE WHEN kind = 'usage' THEN json_extract(payload, '$.input') END), 0), "
            "COALESCE(SUM(CASE WHEN kind = 'usage' THEN json_extract(payload, '$.output') END), 0), "
            "SUM(CASE WHEN kind = 'cost' THEN json_extract(payload, '$.usd') END), "
            "COUNT(CASE WHEN kind = 'cost' AND json_extract(payload, '$.usd') IS NULL THEN 1 END), "
            "COUNT(CASE WHEN kind = 'cost' THEN 1 END), "
            "COUNT(CASE WHEN kind = 'usage' AND (json_extract(payload, '$.input') IS NOT NULL "
            "OR json_extract(payload, '$.output') IS NOT NULL) THEN 1 END) "
            f"FROM events WHERE session = ? {bound} AND kind IN ('usage', 'cost') AND typeof(payload) = 'text'",
            params,
        )
        packed = await self._db.fetchall(
            f"SELECT kind, payload FROM events WHERE session = ? {bound} AND kind IN ('usage', 'cost') "
            "AND typeof(payload) = 'blob'",
            params,
        )
        assert row is not None  # an aggregate always gives one row
        return UsageSums(
            int(row[0]),
            int(row[1]),
            row[2],
            int(row[3]),
            int(row[4]),
            int(row[5]),
            [body_from_payload(kind, loads(payload)) for kind, payload in packed],
        )

    async def last_of_kind(
        self, session_num: int, session_id: str, kind: str, up_to: int | None = None
    ) -> StoredEvent | None:
        """A session's newest event of a kind (with seq ≤ up_to when given)."""
        bound, params = (
            ("AND seq <= ?", (session_num, kind, up_to)) if up_to is not None else ("", (session_num, kind))
        )
        sql = f"SELECT {_COLUMNS} FROM events WHERE session = ? AND kind = ? {bound}"
        if kind in FOLDABLE:  # a delta of a turn still streaming waits in live_deltas
            sql += f" UNION ALL SELECT {_COLUMNS} FROM live_deltas WHERE session = ? AND kind = ? {bound}"
        row = await self._db.fetchone(
            sql + " ORDER BY seq DESC LIMIT 1", params + params if kind in FOLDABLE else params
        )
        return _row_events(session_id, row)[-1] if row else None

    async def last_seq(self, session_num: int) -> int:
        """The newest committed sequence number of a session (0 when empty)."""
        row = await self._db.fetchone(_LAST_SEQ, (session_num, session_num))
        return int(row[0]) if row else 0
