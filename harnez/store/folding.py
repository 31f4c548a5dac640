"""Folded runs: a completed turn's streamed deltas kept as one row, read back as the deltas they were.

While a model turn streams, each coalesced delta is its own row of `live_deltas`, so a crash loses at
most one group commit. When the turn completes (and again when its task finishes, for a turn a crash
cut short), the session's live deltas move to `events`: each run of consecutive deltas of one kind —
text, reasoning, or one tool call's arguments — as one row at the run's last sequence number, holding
the whole text and the length of every delta (`fold`). `events` only grows at its end, so its pages
stay full (migration 0010).
Reads expand that row back into the deltas with their own sequence numbers, so a replay from any
cursor, a page scrolled back and a live subscriber see exactly the events that streamed, gapless;
only the disk sees one row (docs/storage.md, "Folded runs").
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from harnez.events import StoredEvent, body_from_payload
from harnez.store.payloads import encode, loads, masked

FOLDABLE = {"text-delta": "text", "reasoning-delta": "text", "tool-arguments-delta": "delta"}
"""The streamed kinds, and the field of each that holds its text."""

FOLD = "fold"
"""The stored payload's key listing the length of each delta a row stands for (absent: one event)."""

TURN_MARKS = ("turn-started", "user-message")
"""Where a fold looks back to: the turn's start, or its task's prompt when no turn started."""


@dataclass(slots=True)
class Row:
    """A stored event row as folding sees it (the payload decoded only for deltas)."""

    id: int
    seq: int
    kind: str
    payload: dict[str, Any] | None

    @property
    def first_seq(self) -> int:
        """The sequence number of the first delta this row stands for."""
        lengths = self.payload.get(FOLD) if self.payload else None
        return self.seq - len(lengths) + 1 if lengths else self.seq

    def key(self) -> tuple[str, Any, Any] | None:
        """What deltas must share to fold together (None: not a delta)."""
        if self.kind not in FOLDABLE or self.payload is None:
            return None
        return self.kind, self.payload.get("call_id"), self.payload.get("name")

    def text(self) -> str:
        """The delta's text (the whole run's, for a folded row)."""
        assert self.payload is not None
        return str(self.payload.get(FOLDABLE[self.kind], ""))


def runs(rows: list[Row]) -> list[list[Row]]:
    """Runs of two or more rows of one delta kind (and tool call) whose sequence numbers follow on."""
    found: list[list[Row]] = []
    current: list[Row] = []
    for row in rows:
        key = row.key()
        if current and key is not None and key == current[-1].key() and row.first_seq == current[-1].seq + 1:
            current.append(row)
            continue
        if len(current) > 1:
            found.append(current)
        current = [row] if key is not None else []
    if len(current) > 1:
        found.append(current)
    return found


def folded_payload(run: list[Row]) -> dict[str, Any]:
    """The payload of the row a run becomes: the last delta's fields, the whole text, every length."""
    last = run[-1]
    assert last.payload is not None
    lengths: list[int] = []
    for row in run:
        assert row.payload is not None
        lengths += row.payload.get(FOLD) or [len(row.text())]
    payload = {k: v for k, v in last.payload.items() if k != FOLD}
    payload[FOLDABLE[last.kind]] = "".join(row.text() for row in run)
    payload[FOLD] = lengths
    return payload


def fitted(payload: dict[str, Any], kind: str) -> dict[str, Any]:
    """A folded payload whose text masking changed (a credential split across deltas, masked once
    joined): the lengths no longer add up, so the whole text goes to the last delta, the others empty."""
    lengths, text = payload[FOLD], payload[FOLDABLE[kind]]
    if sum(lengths) == len(text):
        return payload
    return {**payload, FOLD: [0] * (len(lengths) - 1) + [len(text)]}


def expand(session_id: str, row: Any, payload: dict[str, Any]) -> list[StoredEvent]:
    """The events a stored row stands for (`seq, task, kind, time` of the row; its decoded payload)."""
    seq, task, kind, time = row["seq"], row["task"], row["kind"], row["time"]
    lengths = payload.get(FOLD)
    field = FOLDABLE.get(kind)
    if not lengths or field is None:
        return [StoredEvent(session_id, seq, task, time, body_from_payload(kind, payload))]
    text, start, first = str(payload.get(field, "")), 0, seq - len(lengths) + 1
    rest = {k: v for k, v in payload.items() if k != FOLD}
    events = []
    for offset, length in enumerate(lengths):
        part = {**rest, field: text[start : start + length]}
        events.append(StoredEvent(session_id, first + offset, task, time, body_from_payload(kind, part)))
        start += length
    return events


def turn_rows(conn: sqlite3.Connection, session_num: int, end_seq: int) -> list[Row]:
    """The rows after the start of the turn that ends at `end_seq` (deltas decoded), oldest first."""
    marks = ", ".join("?" for _ in TURN_MARKS)
    mark = conn.execute(
        f"SELECT seq FROM events WHERE session = ? AND seq < ? AND kind IN ({marks}) ORDER BY seq DESC LIMIT 1",
        (session_num, end_seq, *TURN_MARKS),
    ).fetchone()
    found = conn.execute(
        "SELECT id, seq, kind, payload FROM events WHERE session = ? AND seq > ? AND seq < ? ORDER BY seq",
        (session_num, mark[0] if mark else 0, end_seq),
    ).fetchall()
    return [Row(r[0], r[1], r[2], loads(r[3]) if r[2] in FOLDABLE else None) for r in found]


def fold_plan(rows: list[Row]) -> tuple[list[tuple[str | bytes, int]], list[int]]:
    """What folding `rows` (one session's, in order) writes: (payload, id) of each run's last row, which
    becomes the run, and the ids of the rows that go. The folded rows' payloads are updated in place."""
    updates: list[tuple[str | bytes, int]] = []
    gone: list[int] = []
    for run in runs(rows):
        last = run[-1]
        last.payload = fitted(masked(folded_payload(run)), last.kind)
        updates.append((encode(last.payload), last.id))
        gone += [row.id for row in run[:-1]]
    return updates, gone


def fold_turn(conn: sqlite3.Connection, session_num: int, end_seq: int) -> list[Row]:
    """Move the session's live deltas before `end_seq` to `events`, each run folded into one row; the
    rows of the turn that ends at `end_seq` as they are now."""
    live = conn.execute(
        "SELECT seq, task, kind, payload, time FROM live_deltas WHERE session = ? AND seq < ? ORDER BY seq",
        (session_num, end_seq),
    ).fetchall()
    if live:
        conn.executemany(
            "INSERT INTO events (session, seq, task, kind, payload, time) VALUES (?, ?, ?, ?, ?, ?)",
            [(session_num, *row) for row in moved(live)],
        )
        conn.execute("DELETE FROM live_deltas WHERE session = ? AND seq < ?", (session_num, end_seq))
    return turn_rows(conn, session_num, end_seq)


def moved(live: list[Any]) -> list[tuple[int, int | None, str, str | bytes, float]]:
    """(seq, task, kind, payload, time) of the `events` rows that live delta rows become: each run's
    last row holding the run, a delta alone as it was stored."""
    rows = [Row(index, seq, kind, loads(payload)) for index, (seq, _, kind, payload, _) in enumerate(live)]
    updates, gone = fold_plan(rows)
    payloads = {index: payload for payload, index in updates}
    dropped = set(gone)
    return [
        (seq, task, kind, payloads.get(index, payload), time)
        for index, (seq, task, kind, payload, time) in enumerate(live)
        if index not in dropped
    ]
