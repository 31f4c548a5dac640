"""The server's session API: drafts, listing by cursor, search, rename, delete, tasks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harnez import events as ev
from harnez.errors import SessionNotFoundError
from harnez.events import Event
from harnez.server import Server, TaskOutcome, TaskRun


async def _echo(run: TaskRun) -> TaskOutcome:
    run.emit(ev.TextDelta(text=f"echo: {run.prompt}"), search_text=f"echo: {run.prompt}")
    return TaskOutcome("completed", 1)


async def test_a_session_is_persisted_only_when_its_first_message_arrives(
    db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path, work=_echo)
    draft = server.create_session(workspace, model="local/qwen")
    await server.rename(draft.id, "named before speaking")
    assert (await server.list_sessions()).sessions == []
    await server.submit(draft.id, "hello there")
    await server.wait(draft.id)
    (record,) = (await server.list_sessions()).sessions
    assert record.id == draft.id and record.title == "named before speaking" and record.title_source == "user"
    assert record.model == "local/qwen" and record.status == "completed"
    kinds = [e.kind for e in await server.events_after(draft.id) if e.kind != "title-changed"]
    assert kinds == ["user-message", "text-delta", "finished"]
    await server.close()


async def test_listing_pages_by_cursor_and_says_when_there_is_no_next_page(
    db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path, work=_echo)
    ids = []
    for i in range(7):
        draft = server.create_session(workspace)
        await server.append(draft.id, Event(ev.UserMessage(text=f"prompt {i}")))
        ids.append(draft.id)
    pages, cursor = [], None
    while True:
        page = await server.list_sessions(cursor=cursor, limit=3)
        pages.append([s.id for s in page.sessions])
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert pages == [ids[::-1][0:3], ids[::-1][3:6], ids[::-1][6:7]]
    other = await server.list_sessions(workspace=workspace.parent)
    assert other.sessions == [] and other.next_cursor is None
    await server.close()


async def test_full_text_search_reaches_an_old_session_by_its_conversation(
    db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path, work=_echo)
    old = server.create_session(workspace)
    await server.submit(old.id, "the flux capacitor overheats on startup")
    await server.wait(old.id)
    for i in range(60):
        draft = server.create_session(workspace)
        await server.append(
            draft.id, Event(ev.UserMessage(text=f"ordinary prompt {i}"), search_text=f"ordinary prompt {i}")
        )
    page = await server.list_sessions("capacitor")
    assert [s.id for s in page.sessions] == [old.id]
    assert "[capacitor]" in page.snippets[old.id]
    assert (await server.list_sessions("capac")).sessions[0].id == old.id
    assert len((await server.list_sessions("ordinary", limit=100)).sessions) == 60
    seen, cursor = set(), None
    while True:
        page = await server.list_sessions("ordinary", limit=7, cursor=cursor)
        seen |= {s.id for s in page.sessions}
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert len(seen) == 60
    await server.close()


async def test_ids_resolve_by_unique_prefix_and_unknown_ids_are_clear(db_path: Path, workspace: Path) -> None:
    server = await Server.open(db_path)
    draft = server.create_session(workspace)
    await server.append(draft.id, Event(ev.UserMessage(text="hi")))
    assert (await server.get_session(draft.id[:6])).id == draft.id
    with pytest.raises(SessionNotFoundError, match="No session id starts with"):
        await server.get_session("ffffffffffff" if not draft.id.startswith("f") else "000000000000")
    with pytest.raises(SessionNotFoundError, match="not a session id"):
        await server.get_session("latest-ish")
    await server.close()


async def test_a_rename_is_never_overwritten_by_automatic_naming(db_path: Path, workspace: Path) -> None:
    server = await Server.open(db_path)
    draft = server.create_session(workspace)
    await server.append(draft.id, Event(ev.UserMessage(text="hi")))
    assert await server.set_automatic_title(draft.id, "Keyword title", "keywords")
    await server.rename(draft.id, "  Mine  ")
    assert not await server.set_automatic_title(draft.id, "Model title", "model")
    record = await server.get_session(draft.id)
    assert (record.title, record.title_source) == ("Mine", "user")
    titles = [e.body.title for e in await server.events_after(draft.id) if e.kind == "title-changed"]
    assert titles == ["Keyword title", "Mine"]
    assert [s.id for s in (await server.list_sessions("Mine")).sessions] == [draft.id]
    assert (await server.list_sessions("Keyword")).sessions == []
    await server.close()


async def test_delete_cancels_the_running_task_and_leaves_nothing_readable(
    db_path: Path, workspace: Path
) -> None:
    started = asyncio.Event()

    async def forever(run: TaskRun) -> TaskOutcome:
        run.emit(ev.TextDelta(text="secret words"), search_text="secret words")
        started.set()
        await asyncio.sleep(3600)
        return TaskOutcome("completed")

    server = await Server.open(db_path, work=forever)
    draft = server.create_session(workspace)
    await server.submit(draft.id, "do something long")
    await asyncio.wait_for(started.wait(), 5)
    await server.delete_session(draft.id)
    assert server.running(draft.id) is None
    with pytest.raises(SessionNotFoundError):
        await server.get_session(draft.id)
    assert (await server.list_sessions("secret")).sessions == []
    for table in ("events", "tasks", "search_docs", "context_records", "model_calls"):
        row = await server.store.db.fetchone(f"SELECT COUNT(*) FROM {table}")
        assert row[0] == 0, table
    await server.close()


async def test_cancel_keeps_output_marks_cancelled_and_the_session_continues(
    db_path: Path, workspace: Path
) -> None:
    started = asyncio.Event()

    async def slow(run: TaskRun) -> TaskOutcome:
        run.emit(ev.TextDelta(text="partial"))
        started.set()
        await asyncio.sleep(3600)
        return TaskOutcome("completed")

    server = await Server.open(db_path, work=slow)
    draft = server.create_session(workspace)
    task_id = await server.submit(draft.id, "long job")
    await asyncio.wait_for(started.wait(), 5)
    assert await server.cancel(draft.id)
    assert not await server.cancel(draft.id)
    task = await server.store.tasks.get(task_id)
    assert task.state == "cancelled"
    events = [e for e in await server.events_after(draft.id) if e.kind != "title-changed"]
    assert [e.kind for e in events] == ["user-message", "text-delta", "finished"]
    assert events[-1].body.stop == "cancelled"
    server.set_work(_echo)
    await server.submit(draft.id, "again")
    assert (await server.wait(draft.id)).stop == "completed"
    await server.close()


async def test_prompts_during_a_task_are_queued_and_steering_reaches_the_running_task(
    db_path: Path, workspace: Path
) -> None:
    release = asyncio.Event()
    steered: list[list[str]] = []

    async def waits(run: TaskRun) -> TaskOutcome:
        await release.wait()
        steered.append(run.take_steering())
        return TaskOutcome("completed", 1)

    server = await Server.open(db_path, work=waits)
    draft = server.create_session(workspace)
    first = await server.submit(draft.id, "first")
    queued = await server.submit(draft.id, "second")
    assert await server.submit(draft.id, "look at tests too", steer=True) == first
    release.set()
    await asyncio.wait_for(server.wait(draft.id), 5)
    assert steered == [["look at tests too"], []]
    assert (await server.store.tasks.get(queued)).state == "completed"
    kinds = [(e.kind, e.task) for e in await server.events_after(draft.id) if e.kind != "title-changed"]
    assert kinds == [
        ("user-message", first),
        ("prompt-queued", queued),
        ("user-message", first),
        ("finished", first),
        ("user-message", queued),
        ("finished", queued),
    ]
    await server.close()


async def test_a_task_without_a_model_fails_with_a_message_that_says_what_to_do(
    db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path)
    draft = server.create_session(workspace)
    await server.submit(draft.id, "hi")
    outcome = await server.wait(draft.id)
    assert outcome.stop == "failed" and "No model is configured" in outcome.error
    await server.close()
