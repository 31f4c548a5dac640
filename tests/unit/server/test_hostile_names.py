"""Names and prompts with control characters, lone surrogates or no end: stored clean and capped."""

from __future__ import annotations

from pathlib import Path

from harnez import events as ev
from harnez.server import Server, TaskOutcome, TaskRun
from harnez.titles.keywords import MAX_TITLE_CHARS


async def _echo(run: TaskRun) -> TaskOutcome:
    run.emit(ev.TextDelta(text=run.prompt), search_text=run.prompt)
    return TaskOutcome("completed", 1)


async def test_a_rename_drops_control_characters_and_is_capped(db_path: Path, workspace: Path) -> None:
    server = await Server.open(db_path, work=_echo)
    try:
        draft = server.create_session(workspace)
        await server.submit(draft.id, "hello")
        await server.wait(draft.id)
        stored = await server.rename(draft.id, "evil\x1b]0;pwned\x07\x1b[2J\u202e name\n" + "long " * 100)
        record = await server.get_session(draft.id)
        assert record.title == stored and record.title_source == "user"
        assert stored.startswith("evil]0;pwned[2J name long")
        assert len(stored) <= MAX_TITLE_CHARS and stored.endswith("…")
        assert all(ch.isprintable() for ch in stored)
        (changed,) = [
            e
            for e in await server.events_after(draft.id)
            if e.kind == "title-changed" and e.body.source == "user"
        ]
        assert changed.body.title == stored
    finally:
        await server.close()


async def test_a_lone_surrogate_in_a_name_or_prompt_is_stored_not_refused(
    db_path: Path, workspace: Path
) -> None:
    server = await Server.open(db_path, work=_echo)
    try:
        draft = server.create_session(workspace)
        await server.submit(draft.id, "bad \udcff byte")
        assert (await server.wait(draft.id)).stop == "completed"
        assert await server.rename(draft.id, "name \udcff here") == "name here"
        texts = [
            e.body.to_payload().get("text")
            for e in await server.events_after(draft.id)
            if e.kind == "text-delta"
        ]
        assert texts == ["bad \ufffd byte"]
        found = await server.list_sessions("byte \udcff")
        assert [s.id for s in found.sessions] == [draft.id]
    finally:
        await server.close()


async def test_a_draft_renamed_before_its_first_prompt_is_cleaned_too(db_path: Path, workspace: Path) -> None:
    server = await Server.open(db_path, work=_echo)
    try:
        draft = server.create_session(workspace)
        assert await server.rename(draft.id, "\x1b[31mred\x1b[0m") == "[31mred[0m"
        await server.submit(draft.id, "hi")
        await server.wait(draft.id)
        assert (await server.get_session(draft.id)).title == "[31mred[0m"
    finally:
        await server.close()
