"""Stored payloads: small envelopes compressed against the preset dictionary, older rows still read."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server import Server
from harnez.store.payloads import DICTIONARY_V1, DICTIONARY_V1_TAG, loads, squeeze, unsqueeze

STARTED = ev.Started(
    model="openai/gpt-5", wire="openai-responses", tools=["read", "edit", "shell"], context_window=400000
)


def _payloads(db_path: Path) -> dict[str, str | bytes]:
    with sqlite3.connect(db_path) as conn:
        return dict(conn.execute("SELECT kind, payload FROM events ORDER BY seq").fetchall())


async def _session(db_path: Path, workspace: Path) -> tuple[Server, str]:
    server = await Server.open(db_path)
    draft = server.create_session(workspace)
    await server.persist(draft.id)
    return server, draft.id


def test_the_first_dictionary_never_changes() -> None:
    # Rows compressed against it could no longer be read: a new dictionary needs a new first byte.
    digest = hashlib.sha256(DICTIONARY_V1).hexdigest()
    assert digest == "fa5b82014cbae7a20eaa6313d3fe1a5d0d6d20a85daa3b947889554c3924300d"


async def test_a_tasks_small_envelopes_are_stored_in_a_few_bytes(db_path: Path, workspace: Path) -> None:
    server, session_id = await _session(db_path, workspace)
    await server.append(session_id, Event(STARTED))
    await server.append(session_id, Event(ev.TurnCompleted(turn=1, stop_reason="end_turn")))
    await server.append(session_id, Event(ev.Finished(stop="completed", turns=1)))
    events = await server.events_after(session_id)
    await server.close()
    assert [e.body for e in events] == [
        STARTED,
        ev.TurnCompleted(turn=1, stop_reason="end_turn"),
        ev.Finished(stop="completed", turns=1),
    ]
    stored = _payloads(db_path)
    for kind in ("started", "turn-completed", "finished"):
        payload = stored[kind]
        assert isinstance(payload, bytes) and payload[:1] == DICTIONARY_V1_TAG
    assert len(stored["started"]) < 40 < len(json.dumps(STARTED.to_payload())) / 4


async def test_usage_and_cost_stay_json_that_sqlite_can_sum(db_path: Path, workspace: Path) -> None:
    server, session_id = await _session(db_path, workspace)
    await server.append(session_id, Event(ev.Usage(input=1200, output=30, model="gpt-5")))
    await server.append(session_id, Event(ev.Cost(usd=0.25)))
    totals = await server.session_totals(session_id)
    await server.close()
    assert (totals.input, totals.output, totals.cost_text) == (1200, 30, "$0.25")
    stored = _payloads(db_path)
    assert json.loads(stored["usage"])["input"] == 1200 and json.loads(stored["cost"]) == {"usd": 0.25}


async def test_rows_and_records_written_before_the_dictionary_still_read(
    db_path: Path, workspace: Path
) -> None:
    server, session_id = await _session(db_path, workspace)
    record = await server.get_session(session_id)
    old = zlib.compress(json.dumps(STARTED.to_payload()).encode(), 6)
    item = {"type": "user", "text": "hello from an older Harnez"}
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO events (session, seq, task, kind, payload, time) VALUES (?, 1, NULL, 'started', ?, 1.0)",
            (record.num, old),
        )
        conn.execute(
            "INSERT INTO context_records (session, task, role, body, created_at) VALUES (?, NULL, 'user', ?, 1.0)",
            (record.num, zlib.compress(json.dumps(item).encode())),
        )
    (event,) = await server.events_after(session_id)
    items = await server.store.context.items(record.num)
    await server.close()
    assert event.body == STARTED
    assert items == [("user", None, item)]


async def test_context_records_are_compressed_against_the_dictionary(db_path: Path, workspace: Path) -> None:
    server, session_id = await _session(db_path, workspace)
    record = await server.get_session(session_id)
    item = {"type": "assistant", "text": "short", "reasoning": "", "tool_calls": [], "opaque": []}
    await server.store.context.append(record.num, None, "assistant", item, "openai-responses")
    items = await server.store.context.items(record.num)
    await server.close()
    assert items == [("assistant", "openai-responses", item)]
    with sqlite3.connect(db_path) as conn:
        (body,) = conn.execute("SELECT body FROM context_records").fetchone()
    assert body[:1] == DICTIONARY_V1_TAG and len(body) < len(json.dumps(item)) / 2


def test_squeezed_bytes_come_back_whole() -> None:
    text = "ünïcode and a long run of words " * 300
    assert unsqueeze(squeeze(text.encode())).decode() == text
    assert loads(squeeze(b'{"a":[1,2,{"b":null}]}')) == {"a": [1, 2, {"b": None}]}
