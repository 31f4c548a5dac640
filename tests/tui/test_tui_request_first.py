"""A prompt that starts a task is painted with its answer's first words: the frames are held until the
task's first output (or a time limit), so its request leaves before a frame lays the screen out."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from harnez import events as ev
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.tui import bridge
from harnez.tui.bridge import RequestFirst
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import UserBlock
from tests.tui.conftest import AppFactory
from tests.tui.helpers import wait_for

LONG = 30.0
"""A hold no test outlives: only the task's output (or the test) ends it."""


def record_frames(app: App[Any]) -> list[str]:
    """The plain text of every frame `app` paints from now on, oldest first."""
    frames: list[str] = []
    display = app._display

    def recorded(screen: Any, renderable: Any) -> None:
        if renderable is not None:
            frames.append(Text.from_ansi(renderable.render_segments(app.console)).plain)
        display(screen, renderable)

    app._display = recorded  # type: ignore[method-assign]
    return frames


async def painted(frames: list[str], text: str) -> str:
    """The first frame showing `text`, once painted (plain sleeps: a Pilot pause paints a frame itself);
    fails after 30 s, a limit for a hang, not a timing assertion."""
    deadline = time.monotonic() + 30.0
    while not any(text in frame for frame in frames):
        if time.monotonic() > deadline:
            raise AssertionError(f"Never painted: {text!r}")
        await asyncio.sleep(0.01)
    return next(frame for frame in frames if text in frame)


async def let_run(seconds: float = 0.2) -> None:
    """Give the loop time to paint anything it would (plain sleeps, as above)."""
    await asyncio.sleep(seconds)


class Plain(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("ready")


async def test_held_frames_are_painted_once_the_first_output_is_seen() -> None:
    app = Plain()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        frames = record_frames(app)
        hold = RequestFirst(most=LONG)
        hold.hold(app.screen)
        await app.screen.mount(Static("the prompt"))
        hold.seen(ev.UserMessage(text="the prompt"))
        hold.seen(ev.Started(model="m", wire="openai-chat", tools=[], withheld=[], context_window=None))
        hold.seen(ev.TurnStarted(turn=1))
        await let_run()
        assert hold.holding
        assert not any("the prompt" in frame for frame in frames)
        await app.screen.mount(Static("the answer"))
        hold.seen(ev.TextDelta(text="the answer"))
        assert not hold.holding
        frame = await painted(frames, "the prompt")
        assert "the answer" in frame


async def test_a_hold_ends_by_itself_when_the_model_is_slow() -> None:
    app = Plain()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        frames = record_frames(app)
        hold = RequestFirst(most=0.05)
        hold.hold(app.screen)
        await app.screen.mount(Static("the prompt"))
        await painted(frames, "the prompt")
        assert not hold.holding


class HoldingScreen(Screen[None]):
    """Ends its hold when unmounted, as SessionScreen does: the hold's timer dies with the screen."""

    def __init__(self) -> None:
        super().__init__()
        self.request_first = RequestFirst(most=LONG)

    def on_unmount(self) -> None:
        self.request_first.release()


async def test_a_hold_ends_with_its_screen() -> None:
    app = Plain()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        frames = record_frames(app)
        held = HoldingScreen()
        await app.push_screen(held)
        held.request_first.hold(held)
        app.pop_screen()
        await app.screen.mount(Static("after the held screen"))
        await painted(frames, "after the held screen")


class AnswerOnCue:
    """Work that reaches the model's request (started, turn started) and answers when the test says."""

    def __init__(self) -> None:
        self.requested = asyncio.Event()
        self.answer = asyncio.Event()

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        run.emit(
            ev.Started(model="scripted/demo", wire="openai-chat", tools=[], withheld=[], context_window=None)
        )
        await run.emit_now(ev.TurnStarted(turn=1))
        self.requested.set()
        await self.answer.wait()
        await run.emit_now(ev.TextDelta(text="Quokkas smile."))
        return TaskOutcome("completed", 1)


async def test_a_prompt_is_painted_with_its_answers_first_words(make_app: AppFactory) -> None:
    work = AnswerOnCue()
    app = make_app(work)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready, "session screen")
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        screen._request_first.most = LONG
        await pilot.press(*"Tell me about quokkas.")
        frames = record_frames(app)
        await pilot.press("enter")
        await asyncio.wait_for(work.requested.wait(), 30)
        await let_run()
        assert not any("Tell me about quokkas." in frame for frame in frames)
        work.answer.set()
        frame = await painted(frames, "Tell me about quokkas.")
        assert "Quokkas smile." in frame


class ReadsFirst(AnswerOnCue):
    """Work whose reads before its request last until the test lets them end."""

    def __init__(self) -> None:
        super().__init__()
        self.reads_done = asyncio.Event()
        self.reading = asyncio.Event()

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        self.reading.set()
        await self.reads_done.wait()
        return await super().__call__(run)


async def test_a_held_prompt_is_mounted_once_its_request_has_left(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bridge, "WAIT_FOR_REQUEST", LONG)
    work = ReadsFirst()
    app = make_app(work)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready, "session screen")
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        screen._request_first.most = LONG
        await pilot.press(*"Tell me about quokkas.", "enter")
        await asyncio.wait_for(work.reading.wait(), 30)
        await let_run()
        assert not screen.query(UserBlock), "mounted while the task still read"
        work.reads_done.set()
        await asyncio.wait_for(work.requested.wait(), 30)
        await wait_for(pilot, lambda: screen.query(UserBlock), "the prompt mounted once the request left")
        work.answer.set()


async def test_waiting_for_a_request_ends_with_the_turn_or_the_task(make_app: AppFactory) -> None:
    work = ReadsFirst()
    app = make_app(work)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready, "session screen")
        server, session_id = app.server, app.screen.session_id
        await asyncio.wait_for(server.request_on_its_way(session_id, LONG), 1)  # no task: at once
        await server.submit(session_id, "Tell me about quokkas.")
        await asyncio.wait_for(work.reading.wait(), 30)
        waiting = asyncio.ensure_future(server.request_on_its_way(session_id, LONG))
        await let_run()
        assert not waiting.done()
        work.reads_done.set()
        await asyncio.wait_for(waiting, 30)
        work.answer.set()
        await wait_for(pilot, lambda: server.running(session_id) is None, "the task ends")
