"""A session whose task another Harnez process runs (here a real `harnez run --resume`), opened in the
full-screen app: the status line says it runs elsewhere from the moment it opens, a prompt typed
meanwhile is refused and kept, so are /model and /compact, Esc says it cannot stop that task, and
the other task's `finished` (read by polling) turns the status to idle. The busy check is per
process (the task row's runner pid), so a second Server inside the test process would not reproduce
it."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import AsyncIterator

from textual.pilot import Pilot

from harnez.server.server import Server
from harnez.tui.app import HarnezApp
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import TaskEndBlock
from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.status import StatusLine
from tests.e2e.helpers import HeadlessWorkspace
from tests.tui.helpers import wait_for


def _notified(app: HarnezApp, text: str) -> bool:
    """Whether a toast shown says `text` (whole: none of these is long enough to be cut)."""
    return any(text in str(n.message) for n in app._notifications)


def _run_elsewhere(headless: HeadlessWorkspace, gate: str) -> tuple[str, subprocess.Popen[str]]:
    """A stored session, and a `harnez run --resume` of it that has asked the model, whose answer
    ('done there') waits at `gate`."""
    headless.model.add({"reply": [{"text": "first"}]})
    first = headless.harnez("run", "--json", "--input", "start")  # a stored session to resume
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout.splitlines()[0])["session"]
    headless.model.add({"reply": [{"text": "done there"}], "hold": gate})  # held until released
    other = headless.popen("run", "--resume", session, "--input", "a long task")
    deadline = time.monotonic() + 30
    while len(headless.model.requests) < 2:  # the other task reached the model and waits there
        if other.poll() is not None or time.monotonic() > deadline:
            other.kill()
            raise AssertionError(f"the other run never asked: {other.communicate()}")
        time.sleep(0.02)
    return session, other


@contextlib.asynccontextmanager
async def _shown_running_elsewhere(
    headless: HeadlessWorkspace, gate: str
) -> AsyncIterator[tuple[Pilot, str, subprocess.Popen[str], list[Server]]]:
    """The app showing a session another process runs (`_run_elsewhere`), once its status says so:
    its pilot, the session, that process, and the servers the app opened (closed at the end, and that
    process killed if it still runs)."""
    session, other = _run_elsewhere(headless, gate)
    opened: list[Server] = []

    async def open_server() -> Server:
        opened.append(await Server.open(headless.database))
        return opened[-1]

    app = HarnezApp(open_server, headless.path, None, resume=session)
    try:
        async with app.run_test(notifications=True) as pilot:
            await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen), "opened")
            # No live event comes while the model holds its answer: the state is read at opening.
            await wait_for(pilot, lambda: _state(app) == "running elsewhere", "running elsewhere")
            yield pilot, session, other, opened
    finally:
        if other.poll() is None:
            other.kill()
            other.communicate()
        for server in opened:
            await server.close()


def _ends(app: HarnezApp) -> list[str]:
    """How the tasks shown ended, in order."""
    return [block.stop for block in app.screen.query(TaskEndBlock)]


def _state(app: HarnezApp) -> str:
    return app.screen.query_one(StatusLine).state


async def test_a_session_another_process_runs_says_so_until_that_task_ends(
    headless: HeadlessWorkspace,
) -> None:
    async with _shown_running_elsewhere(headless, "gate") as (pilot, session, other, opened):
        app = pilot.app
        prompt = app.screen.query_one(PromptInput)
        prompt.load_text("mine, written\nwith care")
        await pilot.press("enter")
        await wait_for(pilot, lambda: _notified(app, "your prompt was not sent"), "the refusal")
        assert _notified(app, f"Another Harnez process (pid {other.pid})")
        assert _notified(app, "stays in the box")
        assert prompt.text == "mine, written\nwith care"

        prompt.clear()
        await pilot.press("escape")
        await wait_for(pilot, lambda: _notified(app, "cannot be stopped from here"), "Esc's notice")
        assert not _notified(app, "Cancelling")
        assert other.poll() is None and _state(app) == "running elsewhere"

        # /model wrote its change among the other task's events; /compact got the store's words.
        for typed in ("/model chat/other-model", "/compact"):
            prompt.load_text(typed)
            await pilot.press("enter")
            notice = f"then run {typed.split()[0]} again"
            await wait_for(pilot, lambda notice=notice: _notified(app, notice), typed)
            assert prompt.text == typed and app.screen.query_one(StatusLine).model != "chat/other-model"
            prompt.clear()
        assert not _notified(app, "its turns and yours would mix")

        headless.model.release("gate")
        await wait_for(pilot, lambda: _state(app) == "idle", "idle once the other task finished")
        out, err = other.communicate(timeout=30)
        assert other.returncode == 0, err
        assert "done there" in out  # Esc here stopped nothing
        assert len(headless.model.requests) == 2  # the refused prompt never reached the model
        kinds = [e.body.kind for e in await opened[0].events_after(session)]
        assert "model-changed" not in kinds and "compacted" not in kinds

        # A task another process starts while the session is shown: its live prompt says so too.
        headless.model.add({"reply": [{"text": "again"}], "hold": "later"})
        again = headless.popen("run", "--resume", session, "--input", "another one")
        try:
            await wait_for(pilot, lambda: _state(app) == "running elsewhere", "a live task elsewhere")
            headless.model.release("later")
            await wait_for(pilot, lambda: _state(app) == "idle", "idle again")
            assert again.wait(timeout=30) == 0
        finally:
            if again.poll() is None:
                again.kill()
                again.communicate()


async def test_a_task_whose_process_is_killed_ends_interrupted_without_esc(
    headless: HeadlessWorkspace,
) -> None:
    """kill -9 writes no `finished`: the status said 'running elsewhere' until Esc. The screen checks
    that the process still lives and, once it is gone, closes its task as interrupted (one `finished`,
    shown) and goes idle; a prompt sent then is taken."""
    async with _shown_running_elsewhere(headless, "never") as (pilot, session, other, opened):
        app = pilot.app
        other.kill()
        other.communicate(timeout=30)
        await wait_for(pilot, lambda: _state(app) == "idle", "idle, no key pressed")
        await wait_for(pilot, lambda: _ends(app) == ["completed", "interrupted"], "its end shown")
        assert not _notified(app, "Nothing to stop")  # no Esc was needed

        app.screen.query_one(PromptInput).load_text("are you there")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(_ends(app)) == 3, "the prompt's task ended")
        events = await opened[0].events_after(session)
        ends = [(e.body.stop, e.task) for e in events if e.body.kind == "finished"]
        assert [stop for stop, _ in ends[:2]] == ["completed", "interrupted"]  # closed once
        sent = next(e for e in events if getattr(e.body, "text", None) == "are you there")
        assert sent.task == ends[2][1] and sent.task != ends[1][1]  # the prompt ran as a new task
