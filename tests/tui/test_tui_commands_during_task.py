"""Slash commands while a task of this process runs, over the real agent and the scripted model
(loopback). /new (and /clear) opened a new session and left the task running unseen, its approvals
waiting for nobody; /resume led there through the picker; /model wrote a model change into the
middle of the answer. They, and /compact, are refused with a notice until the task ends, what was
typed kept in the prompt (as Codex refuses them: `available_during_task`)."""

from __future__ import annotations

from textual.pilot import Pilot

from harnez.tui.app import HarnezApp
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import TaskEndBlock
from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.status import StatusLine
from tests.tui.helpers import AgentApp, wait_for

REFUSED = "A task is running: Esc stops it, or wait for it to end"
HELD = {"reply": [{"text": "working on it"}], "hold_after_chunks": 1, "hold": "gate"}
"""A turn that streams its first words, then waits until the test releases the gate."""


def refusals(app: HarnezApp) -> int:
    return sum(REFUSED in str(n.message) for n in app._notifications)


async def task_held(pilot: Pilot) -> SessionScreen:
    """Once the app shows its new session, send a prompt whose answer the model holds (`HELD`) and
    wait until its task runs; the session screen."""
    app = pilot.app
    await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen), "opened")
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    screen.query_one(PromptInput).load_text("a long job")
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen.query_one(StatusLine).state == "running", "the task runs")
    return screen


async def refused(pilot: Pilot, typed: str) -> None:
    """Send `typed` from the prompt and wait for the notice that refuses it."""
    before = refusals(pilot.app)
    pilot.app.screen.query_one(PromptInput).load_text(typed)
    await pilot.press("enter")
    await wait_for(pilot, lambda: refusals(pilot.app) > before, f"{typed} refused")


async def test_new_resume_model_and_compact_wait_for_the_running_task(
    agent_app: AgentApp, scripted_model
) -> None:
    scripted_model.add(HELD)
    app = agent_app()
    async with app.run_test(notifications=True) as pilot:
        screen = await task_held(pilot)
        prompt = screen.query_one(PromptInput)
        model = screen.query_one(StatusLine).model

        for typed in (
            "/clear",
            "/new",
            "/resume",
            "/sessions",
            "/model chat/other-model",
            "/model",
            "/compact",
        ):
            await refused(pilot, typed)
            await pilot.pause()
            assert app.screen is screen, typed  # no new session, no picker, no model list
            assert prompt.text == typed
            prompt.clear()
        assert screen.query_one(StatusLine).model == model
        kinds = [event.kind for event in await app.server.events_after(screen.session_id)]
        assert "model-changed" not in kinds and kinds.count("user-message") == 1  # nor a compaction
        refused_so_far = refusals(app)
        prompt.load_text("/session-name Long job")  # a command that leaves nothing unseen runs
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.session_title == "Long job", "renamed during the task")
        assert refusals(app) == refused_so_far

        scripted_model.release("gate")
        await wait_for(pilot, lambda: screen.query(TaskEndBlock), "the task ends")
        await wait_for(pilot, lambda: app.server.running(screen.session_id) is None, "nothing runs")
        prompt.load_text("/clear")
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen is not screen,
            "a new session once the task ended",
        )
