"""The benchmarks' generated database: the rows the store writes, read by the real Server as a person's."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from harnez import events as ev
from harnez.events import Event, StoredEvent, UnknownEvent
from harnez.server import Server
from harnez.store import Store
from harnez.store.payloads import loads

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import generate_data  # a script of benchmarks/, put on the path above

SESSIONS = 50
EVENTS = 3_000


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A small generated database (and its terms), written once for the module."""
    folder = tmp_path_factory.mktemp("generated")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(generate_data, "DATA", folder)
        return generate_data.ensure(SESSIONS, EVENTS)


async def _every_session(server: Server, **query: Any) -> list[str]:
    """The ids of every session listed, page after page."""
    ids: list[str] = []
    cursor = None
    while True:
        page = await server.list_sessions(cursor=cursor, limit=7, **query)
        ids += [record.id for record in page.sessions]
        cursor = page.next_cursor
        if cursor is None:
            return ids


async def test_the_real_server_lists_filters_searches_and_replays_what_was_asked_for(
    generated: tuple[Path, dict[str, Any]],
) -> None:
    path, terms = generated
    server = await Server.open(path)
    try:
        ids = await _every_session(server)
        assert len(ids) == len(set(ids)) == SESSIONS
        logs = [await server.events_after(session_id) for session_id in ids]
        assert sum(len(log) for log in logs) == EVENTS
        for log in logs:
            assert [e.seq for e in log] == list(range(1, len(log) + 1)), "gapless from 1"
            assert not [e for e in log if isinstance(e.body, UnknownEvent)], "every event of the vocabulary"
            assert log[0].kind == "user-message" and log[-1].kind == "finished"
        titled = await server.list_sessions(terms["title_word"], full_text=False)
        assert titled.sessions
        assert all(terms["title_word"] in (r.title or "").lower() + r.workspace for r in titled.sessions)
        rare = await _every_session(server, query=terms["rare"])
        assert 0 < len(rare) < SESSIONS
        common = await server.list_sessions(terms["common"])
        assert common.sessions and all(terms["common"] in s.lower() for s in common.snippets.values())
    finally:
        await server.close()


def _search_texts(events: list[StoredEvent]) -> list[Event]:
    """The events as the agent emitted them: the prompt and each turn's text searchable."""
    emitted, text = [], ""
    for stored in events:
        body, search = stored.body, None
        if isinstance(body, ev.TurnStarted):
            text = ""
        elif isinstance(body, ev.TextDelta):
            text += body.text
        elif isinstance(body, ev.UserMessage):
            search = body.text
        elif isinstance(body, ev.TurnCompleted):
            search = text
        emitted.append(Event(body, task=stored.task, search_text=search))
    return emitted


def _rows(path: Path, num: int) -> tuple[list[tuple], list[tuple]]:
    """A session's event rows (seq, task, kind, payload as stored) and documents (kind, seq, kept text)."""
    with sqlite3.connect(path) as conn:
        events = conn.execute(
            "SELECT seq, task, kind, payload FROM events WHERE session = ? ORDER BY seq", (num,)
        ).fetchall()
        docs = conn.execute(
            "SELECT kind, seq, text FROM search_docs WHERE session = ? ORDER BY kind, seq", (num,)
        ).fetchall()
    return events, docs


async def test_a_generated_session_is_stored_as_the_store_stores_the_same_events(
    generated: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    path, _ = generated
    with sqlite3.connect(path) as conn:
        num, session_id, workspace, title = conn.execute(
            "SELECT num, id, workspace, title FROM sessions WHERE title IS NOT NULL "
            "ORDER BY (SELECT max(seq) FROM events WHERE session = num) DESC LIMIT 1"
        ).fetchone()
    server = await Server.open(path)
    try:
        events = await server.events_after(session_id)
    finally:
        await server.close()
    store = await Store.open(tmp_path / "through-the-store.sqlite")
    try:
        record = await store.sessions.insert(session_id, workspace, None)
        await store.sessions.set_title(record.num, title, "keywords")
        await store.events.append_many(record.num, session_id, _search_texts(events))
    finally:
        await store.close()
    generated_events, generated_docs = _rows(path, num)
    written_events, written_docs = _rows(tmp_path / "through-the-store.sqlite", record.num)
    assert generated_events == written_events, "the same rows, payloads byte for byte, deltas folded"
    assert generated_docs == written_docs, "the same documents, text kept only where the store keeps it"
    assert any(
        kind == "text-delta" and len(loads(payload).get("fold", [])) > 1
        for _, _, kind, payload in generated_events
    )
