"""Folded runs of deltas: one row on disk, the same events for every reader, from any cursor, once."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from harnez import events as ev
from harnez.events import Event, StoredEvent
from harnez.redaction import SECRETS
from harnez.server import Server
from harnez.store import Store
from harnez.store.context import pack, unpack
from harnez.store.migrate import load_migrations, migrate

ANSWER = ["The quick ", "brown fox ", "jumps over ", "the lazy ", "dog at ", "dawn."]


def _rows(db_path: Path, kind: str) -> list[tuple[int, object]]:
    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT seq, payload FROM events WHERE kind = ? ORDER BY seq", (kind,)).fetchall()


def _seen(events: list[StoredEvent]) -> list[tuple[int, str, str]]:
    return [(e.seq, e.kind, getattr(e.body, "text", "")) for e in events]


async def assert_every_cursor_replays(server: Server, session_id: str) -> list[tuple[int, str, str]]:
    """Every page after and before every cursor is the matching slice of the whole log; the log."""
    everything = _seen(await server.events_after(session_id))
    for cursor in range(len(everything) + 1):
        assert _seen(await server.events_after(session_id, cursor)) == everything[cursor:]
        assert (
            _seen(await server.events_after(session_id, cursor, limit=2)) == everything[cursor : cursor + 2]
        )
        before = cursor + 1
        assert (
            _seen(await server.events_before(session_id, before, 3))
            == everything[max(0, before - 4) : before - 1]
        )
    return everything


async def _chat(server: Server, session_id: str, deltas: list[str] = ANSWER) -> None:
    """A prompt and one streamed answer, each delta committed on its own as the model streams it."""
    record = await server.get_session(session_id)
    log = server.store.events
    await log.append_now(
        record.num, record.id, Event(ev.UserMessage(text="tell me a story"), search_text="tell me a story")
    )
    await log.append_now(record.num, record.id, Event(ev.TurnStarted(turn=1)))
    for delta in deltas:
        await log.append_now(record.num, record.id, Event(ev.TextDelta(text=delta)))
    done = ev.TurnCompleted(turn=1, stop_reason="end_turn")
    await log.append_now(record.num, record.id, Event(done, search_text="".join(deltas)))


async def _opened(db_path: Path, workspace: Path) -> tuple[Server, str]:
    server = await Server.open(db_path)
    draft = server.create_session(workspace)
    await server.persist(draft.id)
    return server, draft.id


async def test_a_completed_turn_is_one_row_that_reads_back_as_its_deltas(
    db_path: Path, workspace: Path
) -> None:
    server, session_id = await _opened(db_path, workspace)
    await _chat(server, session_id)
    events = await server.events_after(session_id)
    await server.close()
    assert [e.seq for e in events] == list(range(1, len(ANSWER) + 4)), "gapless, as streamed"
    assert [getattr(e.body, "text", None) for e in events[2:-1]] == ANSWER
    (row,) = _rows(db_path, "text-delta")
    assert row[0] == 2 + len(ANSWER), "the folded row keeps the run's last seq"


async def test_replay_from_a_cursor_before_inside_and_after_a_folded_run(
    db_path: Path, workspace: Path
) -> None:
    server, session_id = await _opened(db_path, workspace)
    await _chat(server, session_id)
    await assert_every_cursor_replays(server, session_id)
    await server.close()


async def test_subscribe_replays_a_folded_run_from_inside_it(db_path: Path, workspace: Path) -> None:
    server, session_id = await _opened(db_path, workspace)
    await _chat(server, session_id)
    everything = _seen(await server.events_after(session_id))
    last = everything[-1][0]
    for cursor in (0, 3, 5, last - 1):
        seen: list[StoredEvent] = []
        async for event in server.subscribe(session_id, after=cursor):
            seen.append(event)
            if event.seq == last:
                break
        assert _seen(seen) == everything[cursor:]
    await server.close()


async def test_a_live_subscriber_sees_each_delta_once_across_the_fold(db_path: Path, workspace: Path) -> None:
    server, session_id = await _opened(db_path, workspace)
    live: list[StoredEvent] = []
    total = len(ANSWER) + 3

    async def listen(after: int) -> list[StoredEvent]:
        got: list[StoredEvent] = []
        async for event in server.subscribe(session_id, after=after, poll=0.01):
            got.append(event)
            if event.seq == total + 1:
                return got
        return got

    listener = asyncio.create_task(listen(0))
    await asyncio.sleep(0.05)
    await _chat(server, session_id)
    late = asyncio.create_task(listen(4))  # joins after the fold, with a cursor inside the run
    await asyncio.sleep(0.05)
    await server.append(session_id, Event(ev.UserMessage(text="thanks")))
    live, joined = await asyncio.wait_for(asyncio.gather(listener, late), 10)
    everything = _seen(await server.events_after(session_id))
    await server.close()
    assert _seen(live) == everything
    assert _seen(joined) == everything[4:]


async def test_search_finds_folded_text_without_a_copy(db_path: Path, workspace: Path) -> None:
    server, session_id = await _opened(db_path, workspace)
    await _chat(server, session_id)
    page = await server.store.search.search("laz")
    await server.close()
    (hit,) = page.hits
    assert "[lazy]" in hit.snippet and hit.kind == "text-delta"
    with sqlite3.connect(db_path) as conn:
        kept = conn.execute("SELECT kind, text FROM search_docs WHERE text IS NOT NULL").fetchall()
    assert kept == [], "the answer, the prompt and the workspace are indexed from where they are stored"


async def test_deleting_a_folded_session_empties_the_index(db_path: Path, workspace: Path) -> None:
    server, session_id = await _opened(db_path, workspace)
    await _chat(server, session_id)
    await server.delete_session(session_id)
    assert (await server.store.search.search("lazy")).hits == []
    assert (await server.store.search.search("story")).hits == []
    await server.close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute(
            "SELECT count(*) FROM search_fts WHERE search_fts MATCH 'lazy OR story OR w'"
        ).fetchone() == (0,)


async def test_a_credential_split_across_deltas_is_masked_in_the_folded_row(
    db_path: Path, workspace: Path
) -> None:
    SECRETS.add_value("sk-live-0123456789abcdef")
    server, session_id = await _opened(db_path, workspace)
    await _chat(server, session_id, ["the key is sk-live-01234", "56789abcdef, keep it"])
    events = await server.events_after(session_id)
    await server.close()
    text = "".join(getattr(e.body, "text", "") for e in events if e.kind == "text-delta")
    assert "0123456789abcdef" not in text and text.endswith(", keep it")
    assert "56789abcdef" not in str(_rows(db_path, "text-delta"))


async def test_tool_argument_deltas_fold_per_call(db_path: Path, workspace: Path) -> None:
    server, session_id = await _opened(db_path, workspace)
    record = await server.get_session(session_id)
    log = server.store.events
    await log.append_now(record.num, record.id, Event(ev.TurnStarted(turn=1)))
    parts = [("a", '{"pa'), ("a", 'th": "x"}'), ("b", '{"co'), ("b", 'mmand": "ls"}')]
    for call_id, delta in parts:
        await log.append_now(
            record.num, record.id, Event(ev.ToolArgumentsDelta(call_id=call_id, name="read", delta=delta))
        )
    await log.append_now(record.num, record.id, Event(ev.TurnCompleted(turn=1, stop_reason="tool_use")))
    events = await server.events_after(session_id)
    await server.close()
    got = [(e.seq, e.body.call_id, e.body.delta) for e in events if isinstance(e.body, ev.ToolArgumentsDelta)]
    assert got == [(2 + i, call_id, delta) for i, (call_id, delta) in enumerate(parts)]
    assert len(_rows(db_path, "tool-arguments-delta")) == 2


CONTEXT = [
    {"type": "user", "text": "tell me a story"},
    {"type": "assistant", "text": "".join(ANSWER), "reasoning": "", "tool_calls": [], "opaque": []},
]


def _version_6(tmp_path: Path, db_path: Path) -> None:
    """A database as version 6 wrote it: every delta its own row, the text copied into the index, the
    prompt in the task row, a second session's title document."""
    folder = tmp_path / "v6"
    folder.mkdir()
    for migration in load_migrations()[:6]:
        (folder / migration.name).write_text(migration.sql, encoding="utf-8")
    migrate(db_path, folder)
    answer = "".join(ANSWER)
    rows = [("user-message", {"text": "tell me a story", "mode": "prompt"}, "tell me a story")]
    rows += [("turn-started", {"turn": 1}, None)] + [("text-delta", {"text": d}, None) for d in ANSWER]
    rows += [
        ("turn-completed", {"turn": 1, "stop_reason": "end_turn"}, answer),
        ("finished", {"stop": "completed"}, None),
    ]
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO sessions (num, id, workspace, title, created_at, updated_at) VALUES (1, ?, '/w', 'Fox story', 0, 0)",
            ("ab" * 16,),
        )
        conn.execute(
            "INSERT INTO tasks (id, session, state, input, created_at) VALUES (1, 1, 'completed', 'tell me a story', 0)"
        )
        conn.executemany(
            "INSERT INTO search_docs (session, kind, seq, text) VALUES (1, ?, ?, ?)",
            [("workspace", None, "/w"), ("title", None, "Fox story")],
        )
        conn.executemany(
            "INSERT INTO context_records (session, task, role, body, created_at) VALUES (1, 1, ?, ?, 0)",
            [(item["type"], pack(item)) for item in CONTEXT],
        )
        for seq, (kind, payload, text) in enumerate(rows, 1):
            conn.execute(
                "INSERT INTO events (session, seq, task, kind, payload, time) VALUES (1, ?, 1, ?, ?, 0)",
                (seq, kind, json.dumps(payload)),
            )
            if text:
                conn.execute(
                    "INSERT INTO search_docs (session, kind, seq, text) VALUES (1, ?, ?, ?)",
                    (kind, seq, text),
                )


async def test_migration_7_folds_an_old_database_and_keeps_search(tmp_path: Path, db_path: Path) -> None:
    _version_6(tmp_path, db_path)
    store = await Store.open(db_path)
    with sqlite3.connect(db_path) as conn:
        bodies = [unpack(row[0]) for row in conn.execute("SELECT body FROM context_records ORDER BY id")]
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,), "compacted after migrating"
    assert [body["text"] for body in bodies] == [{"event": 1}, {"event": 2 + len(ANSWER)}]
    events = await store.events.read_after(1, "ab" * 16)
    assert [e.seq for e in events] == list(range(1, len(ANSWER) + 5))
    assert [e.body.text for e in events if isinstance(e.body, ev.TextDelta)] == ANSWER
    assert (await store.tasks.get(1)).input == "tell me a story"
    assert [item for _, _, item in await store.context.items(1)] == CONTEXT
    for word, kind in (("lazy", "text-delta"), ("stor", "user-message"), ("fox", "text-delta")):
        (hit,) = (await store.search.search(word)).hits
        assert hit.kind == kind and "[" in hit.snippet
    await store.sessions.set_title(1, "A renamed tale", "user")
    assert (await store.search.search("tale")).hits and not (await store.search.search("story fox")).hits
    await store.sessions.delete(1)
    assert (await store.search.search("lazy")).hits == []
    await store.close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM search_docs WHERE text IS NOT NULL").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM context_records").fetchone() == (0,), (
            "deleted with the session"
        )
        assert conn.execute(
            "SELECT count(*) FROM search_fts WHERE search_fts MATCH 'lazy OR story OR w'"
        ).fetchone() == (0,)
    assert len(list(db_path.parent.glob("harnez.sqlite.v6-*.bak"))) == 1
