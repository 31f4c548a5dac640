"""TUI test helpers: scripted task work, seeding sessions, waiting for the app."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import events
from textual.app import App
from textual.keys import _character_to_key
from textual.pilot import Pilot

from harnez import events as ev
from harnez.errors import HarnezError
from harnez.events import Event
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.server.server import Server

AgentApp = Callable[..., Any]
"""The `agent_app` fixture (tests/tui/conftest.py): builds a HarnezApp over the real agent and the
scripted model."""

ANSWER_MARKDOWN = ["# Plan\n\n", "I will **edit** `main.py`:\n\n", "- add a greeting\n", "- keep the rest\n"]
DIFF = "--- a/main.py\n+++ b/main.py\n@@ -1,2 +1,2 @@\n-print('hi')\n+print('hello')\n x = 1\n"


def type_at_once(app: App[Any], *keys: str) -> None:
    """Keys as a fast typist (or a paste) sends them: all in the app's queue before the first is handled
    (Pilot's `press` waits for the app to go idle after each key). A key is a name ("tab", "enter") or
    one character ("a", " ", ",")."""
    named = {"tab": "\t", "shift+tab": None, "enter": "\r", "escape": "\x1b"}
    for key in keys:
        if key in named:
            event = events.Key(key, named[key])
        else:
            event = events.Key(_character_to_key(key), key)
        event.set_sender(app)
        app._driver.send_message(event)


async def answer_work(run: TaskRun) -> TaskOutcome:
    """A model turn that streams Markdown, edits a file through a tool, then answers again."""
    run.emit(
        ev.Started(
            model="scripted/demo", wire="openai-chat", tools=["edit"], withheld=[], context_window=32000
        )
    )
    run.emit(ev.TurnStarted(turn=1))
    run.emit(ev.ReasoningDelta(text="The user wants a greeting."))
    for chunk in ANSWER_MARKDOWN:
        run.emit(ev.TextDelta(text=chunk))
        await asyncio.sleep(0)
    arguments = {"path": "main.py", "old": "print('hi')", "new": "print('hello')"}
    run.emit(ev.ToolRequested(call_id="call-1", name="edit", arguments=arguments))
    run.emit(
        ev.ToolCompleted(
            call_id="call-1", name="edit", content="Edited main.py", details={"diff": DIFF}, is_error=False
        )
    )
    run.emit(ev.Usage(input=1200, output=80, cache_read=0, cache_write=0, reasoning=5, model="scripted/demo"))
    run.emit(ev.Cost(usd=0.25))
    run.emit(ev.TurnStarted(turn=2))
    run.emit(ev.TextDelta(text="Done: `main.py` now says **hello**."))
    await run.emit_now(ev.WarningEvent(code="unknown-stream-event", message="A sample warning."))
    return TaskOutcome("completed", 2)


async def failing_work(run: TaskRun) -> TaskOutcome:
    """A task whose provider refuses the request."""
    run.emit(ev.TurnStarted(turn=1))
    await run.emit_now(ev.Error(message="The provider answered 401: check OPENAI_API_KEY."))
    raise HarnezError("The provider rejected the credentials (401).")


async def retry_work(run: TaskRun) -> TaskOutcome:
    """A turn that streams, is retried, then streams the final answer."""
    run.emit(ev.TurnStarted(turn=1))
    run.emit(ev.TextDelta(text="partial answer that will vanish"))
    run.emit(ev.TurnRetried(attempt=2, delay=0.5, reason="overloaded"))
    run.emit(ev.TurnStarted(turn=1))
    await run.emit_now(ev.TextDelta(text="final answer"))
    return TaskOutcome("completed", 1)


class FedWork:
    """A turn whose text deltas are the pieces the test feeds it; `None` ends it."""

    def __init__(self) -> None:
        self.pieces: asyncio.Queue[str | None] = asyncio.Queue()

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        run.emit(ev.TurnStarted(turn=1))
        while (piece := await self.pieces.get()) is not None:
            await run.emit_now(ev.TextDelta(text=piece))
        return TaskOutcome("completed", 1)


class GatedWork:
    """Work that runs until the test opens its gate (or cancels it); records steering it receives."""

    def __init__(self) -> None:
        self.gate: asyncio.Event | None = None
        self.steering: list[str] = []
        self.started = 0

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        self.started += 1
        if self.gate is None:
            self.gate = asyncio.Event()
        await run.emit_now(ev.TextDelta(text=f"working on: {run.prompt}"))
        await self.gate.wait()
        self.steering += run.take_steering()
        self.gate = None
        await run.emit_now(ev.TextDelta(text=" — done"))
        return TaskOutcome("completed", 1)

    def release(self) -> None:
        """Let the running task finish."""
        if self.gate is not None:
            self.gate.set()


async def wait_for(
    pilot: Pilot, condition: Callable[[], Any], what: str = "condition", tries: int = 400
) -> None:
    """Let the app run until `condition()` holds; fail after at least `tries` short pauses and 30 s
    (a limit for a hang, not a timing assertion: a loaded machine stretches every pause)."""
    deadline = time.monotonic() + 30.0
    attempt = 0
    while attempt < tries or time.monotonic() < deadline:
        if condition():
            return
        attempt += 1
        await pilot.pause(0.01)
    raise AssertionError(f"Never happened: {what}")


async def ctrl_c_twice_quits(pilot: Pilot, shown: type) -> None:
    """On the modal screen shown, a first Ctrl+C says a second one quits and leaves it open; the
    second quits the app."""
    app = pilot.app
    await pilot.press("ctrl+c")
    assert any("Press Ctrl+C again to quit" in str(n.message) for n in app._notifications)
    assert isinstance(app.screen, shown) and app.return_code is None
    await pilot.press("ctrl+c")
    await wait_for(pilot, lambda: app.return_code is not None, "quit")
    assert app.return_code == 0


def shown_answer(screen: Any) -> Any:
    """The one answer block shown. The transcript keeps a hidden spare one ready for the next answer
    (mounted by the warm-up, and again when a task ends), which `query_one` would meet too."""
    from harnez.tui.widgets.blocks import AssistantBlock

    (block,) = [block for block in screen.query(AssistantBlock) if block.display]
    return block


def shows_a_title(app: Any) -> bool:
    """Whether the session screen's status line shows the session's title, under a modal screen too (the
    keyword worker names a session after its first answer, so a snapshot taken after it waits for it)."""
    from harnez.tui.screens.session import NEW_SESSION_TITLE
    from harnez.tui.widgets.status import StatusLine

    lines = [line for screen in app.screen_stack for line in screen.query(StatusLine)]
    return any(line.title not in ("", NEW_SESSION_TITLE) for line in lines)


async def seed_session(
    server: Server, workspace: Path, prompt: str, answer: str = "An answer.", title: str | None = None
) -> str:
    """A stored session with one exchange, written through the server as a finished task would."""
    draft = server.create_session(workspace, model="scripted/demo")
    await server.append(draft.id, Event(ev.UserMessage(text=prompt, mode="prompt"), search_text=prompt))
    await server.append(draft.id, Event(ev.TextDelta(text=answer), search_text=answer))
    await server.append(draft.id, Event(ev.Finished(stop="completed", turns=1, error=None)))
    if title:
        await server.rename(draft.id, title)
    return draft.id


async def seed_database(
    db_path: Path, workspace: Path, titled_prompts: list[tuple[str, str | None]]
) -> list[str]:
    """Stored sessions of (prompt, title or None), oldest first, written by a server opened for it."""
    server = await Server.open(db_path)
    try:
        return [
            await seed_session(server, workspace, prompt, title=title) for prompt, title in titled_prompts
        ]
    finally:
        await server.close()
