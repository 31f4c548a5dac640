"""How the approval prompt looks: an edit with its diff, and the reason input after `n`."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from harnez import events as ev
from harnez.server import server as server_module
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.server.server import Server
from harnez.tui.app import HarnezApp
from harnez.tui.screens.approval import ApprovalScreen
from harnez.tui.widgets.prompt import PromptInput
from tests.tui.helpers import shows_a_title, wait_for

WORKSPACE = Path("/harnez-demo/project")
"""A fixed workspace path, so the screen shows the same text on every run (it need not exist)."""

ARGUMENTS = {"path": "src/greet.py", "old_string": "print('hi')", "new_string": "print('hello, world')"}
DIFF = (
    "--- a/src/greet.py\n+++ b/src/greet.py\n@@ -1,3 +1,3 @@\n def greet():\n"
    "-    print('hi')\n+    print('hello, world')\n \n"
)


@pytest.fixture(autouse=True)
def fixed_session_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic session ids."""
    counter = itertools.count(1)
    monkeypatch.setattr(server_module, "new_session_id", lambda: f"{next(counter):02x}a99f0e" + "0" * 24)


async def asking_edit(run: TaskRun) -> TaskOutcome:
    """An edit that asks for approval, as the agent does, and waits for the answer."""
    # The agent names the tool `tool`, docs/events.md and the transcript `name`: both, so either fix keeps this.
    run.emit(ev.TurnStarted(turn=1))
    run.emit(ev.ToolRequested(call_id="e1", name="edit", arguments=ARGUMENTS))
    # The model's turn ends before its call is approved (naming starts then, as with the agent).
    await run.emit_now(ev.TurnCompleted(turn=1, stop_reason="tool_use"))
    run.emit(
        ev.ApprovalRequired(
            call_id="e1",
            name="edit",
            arguments=ARGUMENTS,
            reason="Edits need approval in ask mode.",
            diff=DIFF,
        )
    )
    answer = await run.approvals.wait(run.session.id, "e1")
    await run.emit_now(
        ev.ApprovalResolved(
            call_id="e1", name="edit", verdict=answer.verdict, reason=answer.reason, by=answer.by
        )
    )
    return TaskOutcome("completed", 1)


def build(db_path: Path) -> HarnezApp:
    async def open_server() -> Server:
        return await Server.open(db_path, work=asking_edit)

    return HarnezApp(open_server, WORKSPACE, None)


async def ask(pilot) -> None:
    await wait_for(pilot, lambda: pilot.app.ready)
    pilot.app.screen.query_one(PromptInput).load_text("Greet the world")
    await pilot.press("enter")
    await wait_for(
        pilot,
        lambda: isinstance(pilot.app.screen, ApprovalScreen) and pilot.app.screen.armed,
        "approval prompt",
    )
    await wait_for(pilot, lambda: shows_a_title(pilot.app), "the session's title")
    await pilot.pause()


def test_approval_prompt_for_an_edit_with_a_diff(snap_compare, db_path: Path) -> None:
    assert snap_compare(build(db_path), terminal_size=(100, 30), run_before=ask)


def test_approval_prompt_asking_for_a_reason(snap_compare, db_path: Path) -> None:
    async def deny(pilot) -> None:
        await ask(pilot)
        await pilot.press("n", *"use print")
        await pilot.pause()

    assert snap_compare(build(db_path), terminal_size=(100, 30), run_before=deny)
