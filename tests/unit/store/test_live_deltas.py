"""Live deltas: a streaming turn's deltas wait outside `events`, read by every reader as if they were in
it, and move there folded when the turn ends — or when the next open closes a killed task."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server import Server
from harnez.store.migrate import load_migrations, migrate
from tests.unit.store.test_crash import _run_until
from tests.unit.store.test_folding import _seen, assert_every_cursor_replays

ANSWER = ["Once ", "upon ", "a time ", "there was ", "a fox."]


def _count(db_path: Path, sql: str) -> int:
    with sqlite3.connect(db_path) as conn:
        return int(conn.execute(sql).fetchone()[0])


async def _streaming(db_path: Path, workspace: Path) -> tuple[Server, str]:
    """A session whose first turn has streamed its deltas and not ended, each delta committed alone."""
    server = await Server.open(db_path)
    draft = server.create_session(workspace)
    record = await server.persist(draft.id)
    log = server.store.events
    await log.append_now(record.num, record.id, Event(ev.UserMessage(text="a story"), search_text="a story"))
    await log.append_now(record.num, record.id, Event(ev.TurnStarted(turn=1)))
    for delta in ANSWER:
        await log.append_now(record.num, record.id, Event(ev.TextDelta(text=delta)))
    return server, draft.id


async def test_a_streaming_turn_reads_the_same_from_every_cursor_while_its_deltas_wait_apart(
    db_path: Path, workspace: Path
) -> None:
    server, session_id = await _streaming(db_path, workspace)
    assert _count(db_path, "SELECT count(*) FROM events WHERE kind = 'text-delta'") == 0
    assert _count(db_path, "SELECT count(*) FROM live_deltas") == len(ANSWER)
    everything = await assert_every_cursor_replays(server, session_id)
    assert [seq for seq, _, _ in everything] == list(range(1, len(ANSWER) + 3))
    assert [text for _, kind, text in everything if kind == "text-delta"] == ANSWER
    assert await server.last_seq(session_id) == len(ANSWER) + 2
    await server.append(
        session_id, Event(ev.TurnCompleted(turn=1, stop_reason="end_turn"), search_text="".join(ANSWER))
    )
    after_fold = _seen(await server.events_after(session_id))
    hits = (await server.store.search.search("fox")).hits
    await server.close()
    assert after_fold[:-1] == everything, "the fold changes nothing a reader sees"
    assert _count(db_path, "SELECT count(*) FROM live_deltas") == 0
    assert _count(db_path, "SELECT count(*) FROM events WHERE kind = 'text-delta'") == 1
    assert [hit.kind for hit in hits] == ["text-delta"]


async def test_events_rows_are_only_ever_added_at_the_end(db_path: Path, workspace: Path) -> None:
    server, session_id = await _streaming(db_path, workspace)
    await server.append(session_id, Event(ev.TurnCompleted(turn=1, stop_reason="end_turn")))
    await server.close()
    with sqlite3.connect(db_path) as conn:
        rows = conn.execute("SELECT id, seq FROM events ORDER BY id").fetchall()
    assert [row_id for row_id, _ in rows] == list(range(1, len(rows) + 1)), "no row was deleted from events"


async def test_a_killed_writers_live_deltas_replay_and_are_folded_when_its_task_is_closed(
    db_path: Path, workspace: Path
) -> None:
    session, last_reported = _run_until(db_path, workspace, 60)
    waiting = _count(db_path, "SELECT count(*) FROM live_deltas")
    assert _count(db_path, "SELECT count(*) FROM events WHERE kind = 'text-delta'") == 0
    assert _count(db_path, "SELECT count(*) FROM events") + waiting >= last_reported, (
        "every committed delta of the cut turn survives the kill"
    )
    server = await Server.open(db_path)
    events = await server.events_after(session)
    await server.close()
    deltas = [e.body.text for e in events if isinstance(e.body, ev.TextDelta)]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert deltas == [f"chunk {i} " for i in range(len(deltas))] and len(deltas) >= waiting
    assert [e for e in events if e.task is not None][-1].kind == "finished"  # the excerpt title may follow
    assert _count(db_path, "SELECT count(*) FROM live_deltas") == 0
    # One row per run: a title landing mid-stream would split it in two.
    assert _count(db_path, "SELECT count(*) FROM events WHERE kind = 'text-delta'") <= 2


async def test_migrating_moves_a_running_tasks_deltas_and_keeps_a_finished_ones(
    tmp_path: Path, db_path: Path
) -> None:
    folder = tmp_path / "v8"
    folder.mkdir()
    for migration in load_migrations()[:8]:
        (folder / migration.name).write_text(migration.sql, encoding="utf-8")
    migrate(db_path, folder)
    rows = [(1, "text-delta", {"text": "done", "fold": [4]}), (1, "finished", {"stop": "completed"})]
    rows += [
        (2, "turn-started", {"turn": 1}),
        (2, "text-delta", {"text": "half "}),
        (2, "text-delta", {"text": "way"}),
    ]
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO sessions (num, id, workspace, title, created_at, updated_at) VALUES (1, ?, '/w', 't', 0, 0)",
            ("cd" * 16,),
        )
        conn.execute(
            "INSERT INTO tasks (id, session, state, input, created_at) VALUES (1, 1, 'completed', '', 0)"
        )
        conn.execute(
            "INSERT INTO tasks (id, session, state, input, created_at) VALUES (2, 1, 'running', '', 0)"
        )
        conn.executemany(
            "INSERT INTO events (session, seq, task, kind, payload, time) VALUES (1, ?, ?, ?, ?, 0)",
            [(seq, task, kind, json.dumps(payload)) for seq, (task, kind, payload) in enumerate(rows, 1)],
        )
    server = await Server.open(db_path)  # migrates, then closes the dead runner's task
    events = await server.events_after("cd" * 16)
    await server.close()
    assert [(e.seq, e.kind) for e in events][:5] == [(seq, kind) for seq, (_, kind, _) in enumerate(rows, 1)]
    assert [e.body.text for e in events if isinstance(e.body, ev.TextDelta)] == ["done", "half ", "way"]
    assert _count(db_path, "SELECT count(*) FROM live_deltas") == 0
    assert _count(db_path, "SELECT count(*) FROM events WHERE kind = 'text-delta'") == 2, (
        "the run folded at close"
    )
