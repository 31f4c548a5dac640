"""A session's conversation is decoded once: later tasks read only the records added since."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harnez.store import Store, context
from harnez.store.context import KEEP_SESSIONS, ContextRecords
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, make_settings, run_task, tool_call


class CountingUnpack:
    def __init__(self) -> None:
        self.calls = 0
        self._unpack = context.unpack

    def __call__(self, body: bytes) -> dict:
        self.calls += 1
        return self._unpack(body)


def user(text: str) -> dict:
    return {"type": "user", "text": text}


async def fresh_items(store: Store, session_num: int) -> list:
    """The records as a reader that kept nothing reads them."""
    return await ContextRecords(store.db).items(session_num)


async def test_a_later_read_decodes_only_the_records_added_since(
    db_path: Path, workspace: Path, monkeypatch
) -> None:
    store = await Store.open(db_path)
    try:
        session = await store.sessions.insert("s-1", str(workspace), None)
        for n in range(5):
            await store.context.append(session.num, None, "user", user(f"m{n}"))
        counting = CountingUnpack()
        monkeypatch.setattr(context, "unpack", counting)
        assert [item["text"] for _, _, item in await store.context.items(session.num)] == [
            f"m{n}" for n in range(5)
        ]
        assert counting.calls == 5
        await store.context.append(session.num, None, "user", user("m5"))
        await store.context.append(session.num, None, "user", user("m6"))
        again = await store.context.items(session.num)
        assert counting.calls == 7  # only the two new ones
        assert again == await fresh_items(store, session.num)
        assert [item["text"] for _, _, item in again] == [f"m{n}" for n in range(7)]
        again.clear()  # a caller's list is its own
        assert len(await store.context.items(session.num)) == 7
    finally:
        await store.close()


async def test_records_gone_from_under_the_kept_ones_are_read_again(db_path: Path, workspace: Path) -> None:
    store = await Store.open(db_path)
    try:
        session = await store.sessions.insert("s-1", str(workspace), None)
        for n in range(3):
            await store.context.append(session.num, None, "user", user(f"old{n}"))
        assert len(await store.context.items(session.num)) == 3
        # Another process deletes the records and writes new ones under the same session number
        # (a deleted session whose number was reused).
        with sqlite3.connect(db_path) as conn:
            conn.execute("DELETE FROM context_records WHERE session = ?", (session.num,))
        await store.context.append(session.num, None, "user", user("new"))
        assert [item["text"] for _, _, item in await store.context.items(session.num)] == ["new"]
        # The same ids given again to other records (SQLite reuses the highest ids once deleted).
        with sqlite3.connect(db_path) as conn:
            (kept_id,) = conn.execute(
                "SELECT id FROM context_records WHERE session = ?", (session.num,)
            ).fetchone()
            conn.execute("DELETE FROM context_records WHERE session = ?", (session.num,))
        await store.context.append(session.num, None, "user", user("newer"))
        with sqlite3.connect(db_path) as conn:
            (reused,) = conn.execute(
                "SELECT id FROM context_records WHERE session = ?", (session.num,)
            ).fetchone()
        assert reused == kept_id
        assert [item["text"] for _, _, item in await store.context.items(session.num)] == ["newer"]
    finally:
        await store.close()


async def test_only_the_newest_sessions_read_are_kept(db_path: Path, workspace: Path) -> None:
    store = await Store.open(db_path)
    try:
        nums = []
        for n in range(KEEP_SESSIONS + 2):
            session = await store.sessions.insert(f"s-{n}", str(workspace), None)
            await store.context.append(session.num, None, "user", user(f"in {n}"))
            nums.append(session.num)
            await store.context.items(session.num)
        assert list(store.context._kept) == nums[-KEEP_SESSIONS:]
    finally:
        await store.close()


async def test_tasks_of_a_session_see_the_same_conversation_as_a_fresh_read(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    scripted_model.add(
        tool_call("read", "r1", path="notes.txt"),
        answer("The note says to remember the milk."),
        answer("You asked about the note."),
        tool_call("read", "r2", path="notes.txt"),
        answer("Still the milk."),
    )
    server = await open_server(make_settings(scripted_model))
    session_id, first = await run_task(server, workspace, "what is in notes.txt?")
    _, second = await run_task(server, workspace, "what did I ask?", session_id)
    _, third = await run_task(server, workspace, "read it again", session_id)
    assert (first.stop, second.stop, third.stop) == ("completed", "completed", "completed")
    record = await server.get_session(session_id)
    kept = await server.store.context.items(record.num)
    assert kept == await fresh_items(server.store, record.num)
    assert [role for role, _, _ in kept] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    last_request = scripted_model.requests[-1].body
    assert "remember the milk" in str(last_request) and "what did I ask?" in str(last_request)
