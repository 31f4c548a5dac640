"""`!command` lines: run by the server in the workspace, stored as `shell-line`, never sent to the model."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from harnez.agent.work import AgentWork
from harnez.errors import HarnezError
from harnez.server import Server, TaskOutcome, TaskRun
from harnez.settings import PermissionSettings, Settings
from harnez.store import documents
from harnez.testing.scripted_model import ScriptedModel
from harnez.transcript import render_plain
from tests.agent.helpers import answer, make_settings


@pytest.fixture
async def server(db_path: Path) -> AsyncIterator[Server]:
    opened = await Server.open(db_path)
    yield opened
    await opened.close()


async def test_output_and_exit_code_are_stored_and_the_draft_is_saved(
    server: Server, workspace: Path
) -> None:
    draft = server.create_session(workspace)
    event = await server.run_shell(draft.id, "  echo zebra-token-81; echo oops >&2; exit 3  ")
    assert event.kind == "shell-line" and event.task is None
    assert event.body.command == "echo zebra-token-81; echo oops >&2; exit 3"
    assert event.body.output == "zebra-token-81\noops"
    assert event.body.exit_code == 3 and event.body.timed_out is False
    assert isinstance(event.body.duration, float)
    assert server.draft(draft.id) is None
    assert [s.id for s in (await server.list_sessions()).sessions] == [draft.id]
    assert [e.kind for e in await server.events_after(draft.id)] == ["shell-line"]
    found = await server.list_sessions("zebra-token-81")
    assert [s.id for s in found.sessions] == [draft.id]


async def test_coloured_output_is_found_by_its_words_and_stored_raw(server: Server, workspace: Path) -> None:
    """The index had the output's escape sequences in its words: `\x1b[31merror` was `31merror`."""
    # The words are in the output only (the command is indexed, and the session titled with it).
    (workspace / "colours.sh").write_text(
        r"printf '\033[31merror\033[0m: disk \033[1;33mfull\033[0m\n\033]0;title\007'" + "\n"
    )
    draft = server.create_session(workspace)
    event = await server.run_shell(draft.id, "sh colours.sh")
    assert event.body.output == "\x1b[31merror\x1b[0m: disk \x1b[1;33mfull\x1b[0m\n\x1b]0;title\x07"
    (stored,) = await server.events_after(draft.id)
    assert stored.body.output == event.body.output  # the event keeps what the command wrote
    for word in ("error", "full", "disk full"):
        assert [s.id for s in (await server.list_sessions(word)).sessions] == [draft.id], word
    assert (await server.list_sessions("31merror")).sessions == []
    (hit,) = (await server.store.search.search("error")).hits
    assert (hit.kind, hit.snippet) == ("shell-line", "sh colours.sh [error:] disk full")
    await server.delete_session(draft.id)  # the document is removed with the text it indexed
    assert await indexed_terms(server) == []


async def test_a_command_indexed_raw_before_keeps_its_words_and_is_removed_whole(
    server: Server, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database written before the output was indexed plain: its documents derive the raw text from
    the event, as they did, so deleting the session forgets every word FTS5 was given."""
    (workspace / "colours.sh").write_text(r"printf '\033[31merror\033[0m\n'" + "\n")
    draft = server.create_session(workspace)
    with monkeypatch.context() as before:
        before.setattr(documents, "TERMINAL_KINDS", frozenset())
        await server.run_shell(draft.id, "sh colours.sh")
    assert "31merror" in await indexed_terms(server)
    assert [s.id for s in (await server.list_sessions("31merror")).sessions] == [draft.id]
    await server.delete_session(draft.id)
    assert await indexed_terms(server) == []


async def indexed_terms(server: Server) -> list[str]:
    """The words of the full-text index (`search_terms`: its fts5vocab table)."""
    return [row[0] for row in await server.store.db.fetchall("SELECT term FROM search_terms")]


async def test_the_command_runs_in_the_session_workspace(server: Server, workspace: Path) -> None:
    (workspace / "here.txt").write_text("x")
    draft = server.create_session(workspace)
    event = await server.run_shell(draft.id, "pwd; ls")
    assert event.body.output == f"{os.path.realpath(workspace)}\nhere.txt"
    assert event.body.exit_code == 0


async def test_a_command_with_no_output_stores_an_empty_output(server: Server, workspace: Path) -> None:
    draft = server.create_session(workspace)
    event = await server.run_shell(draft.id, "true")
    assert event.body.output == "" and event.body.exit_code == 0


async def test_a_command_past_its_timeout_is_killed_and_marked(server: Server, workspace: Path) -> None:
    draft = server.create_session(workspace)
    event = await server.run_shell(draft.id, "echo before; sleep 30", timeout=0.3)
    assert event.body.timed_out is True
    assert event.body.output == "before"
    assert event.body.exit_code != 0


async def test_a_cancelled_command_is_killed_and_its_partial_output_kept(
    server: Server, workspace: Path
) -> None:
    draft = server.create_session(workspace)
    running = asyncio.create_task(server.run_shell(draft.id, "echo partial; touch started; sleep 30"))
    while not (workspace / "started").exists():
        await asyncio.sleep(0.02)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    (event,) = await server.events_after(draft.id)
    assert event.body.cancelled is True and event.body.output == "partial"


async def test_read_only_mode_refuses_and_saves_nothing(db_path: Path, workspace: Path) -> None:
    settings = Settings(permissions=PermissionSettings(mode="read-only"))
    server = await Server.open(db_path, settings)
    try:
        draft = server.create_session(workspace)
        with pytest.raises(HarnezError, match=r"Read-only mode runs no shell commands.*Shift\+Tab"):
            await server.run_shell(draft.id, "touch made")
        with pytest.raises(HarnezError, match="Read-only"):
            await server.run_shell(draft.id, "touch made", mode="read-only")
        assert not (workspace / "made").exists()
        assert server.draft(draft.id) is not None
        event = await server.run_shell(draft.id, "touch made", mode="ask")
        assert event.body.exit_code == 0 and (workspace / "made").exists()
    finally:
        await server.close()


async def test_an_empty_command_is_refused(server: Server, workspace: Path) -> None:
    draft = server.create_session(workspace)
    with pytest.raises(HarnezError, match="Type a command after `!`"):
        await server.run_shell(draft.id, "   ")


async def test_a_shell_line_may_run_while_a_task_runs(db_path: Path, workspace: Path) -> None:
    gate = asyncio.Event()

    async def waiting(run: TaskRun) -> TaskOutcome:
        await gate.wait()
        return TaskOutcome("completed", 1)

    server = await Server.open(db_path, work=waiting)
    try:
        draft = server.create_session(workspace)
        await server.submit(draft.id, "work on it")
        event = await server.run_shell(draft.id, "echo meanwhile")
        assert server.running(draft.id) is not None and event.body.output == "meanwhile"
        gate.set()
        assert (await server.wait(draft.id)).stop == "completed"
    finally:
        await server.close()


async def test_the_model_never_sees_a_shell_line(
    scripted_model: ScriptedModel, db_path: Path, workspace: Path
) -> None:
    scripted_model.add(answer("First answer."), answer("Second answer."))
    settings = make_settings(scripted_model)
    server = await Server.open(db_path, settings, AgentWork(settings))
    try:
        draft = server.create_session(workspace)
        await server.submit(draft.id, "hello")
        await server.wait(draft.id)
        await server.run_shell(draft.id, "echo shell-secret-93")
        await server.submit(draft.id, "and now?")
        await server.wait(draft.id)
    finally:
        await server.close()
    assert len(scripted_model.requests) == 2
    second = json.dumps(scripted_model.requests[1].body)
    assert "and now?" in second and "First answer." in second
    assert "shell-secret-93" not in second


async def test_sessions_show_renders_a_shell_line_with_its_output_and_failure(
    server: Server, workspace: Path
) -> None:
    draft = server.create_session(workspace)
    await server.run_shell(draft.id, "echo fine")
    await server.run_shell(draft.id, "echo broken; exit 2")
    text = render_plain(await server.events_after(draft.id))
    assert text == "$ echo fine\nfine\n\n$ echo broken; exit 2\nbroken\n[exit code 2]\n\n"


async def test_a_coloured_output_is_stored_as_written_and_plain_in_the_transcript(
    server: Server, workspace: Path
) -> None:
    draft = server.create_session(workspace)
    event = await server.run_shell(draft.id, r"printf '\033[32mok\033[0m 10%%\r100%%\n'")
    assert event.body.output == "\x1b[32mok\x1b[0m 10%\r100%"
    text = render_plain(await server.events_after(draft.id))
    assert text == "$ printf '\\033[32mok\\033[0m 10%%\\r100%%\\n'\n100%\n\n"
