"""A session opened while its answer streams shows that answer whole, however many deltas it has.

The window read on opening holds the newest 200 events, and while a turn streams each delta is an
event: an answer longer than that was cut where the window began, its head drawn from the older page
as an answer of its own (once scrolled to) and the rest as another, the Markdown parsed in two (a list
item split into a bullet and a stray paragraph)."""

from __future__ import annotations

import asyncio

from harnez import events as ev
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.tui.bridge import WINDOW_EVENTS
from harnez.tui.widgets.blocks import AssistantBlock
from harnez.tui.widgets.prompt import PromptInput
from tests.tui.helpers import wait_for

ITEMS = [f"- item number {n} with some words\n" for n in range(WINDOW_EVENTS)]
HEAD = ["## A list\n\n", *ITEMS[:-1], "- item number "]
TAIL = [f"{WINDOW_EVENTS - 1} with some words\n", "\nThe end.\n"]


class LongAnswer:
    """Streams an answer of more deltas than the window holds, then waits until `go` is set."""

    def __init__(self) -> None:
        self.go = asyncio.Event()

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        run.emit(ev.TurnStarted(turn=1))
        for delta in HEAD[:-1]:
            run.emit(ev.TextDelta(text=delta))
        await run.emit_now(ev.TextDelta(text=HEAD[-1]))
        await self.go.wait()
        for delta in TAIL:
            await run.emit_now(ev.TextDelta(text=delta))
        return TaskOutcome("completed", 1)


def answers(app) -> list[str]:
    return [block.text for block in app.screen.query(AssistantBlock) if block.display]


async def test_a_session_opened_mid_answer_shows_the_answer_whole(make_app) -> None:
    work = LongAnswer()
    app = make_app(work)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready)
        app.screen.query_one(PromptInput).load_text("a long list")
        await pilot.press("enter")
        await wait_for(pilot, lambda: answers(app) == ["".join(HEAD)], "the answer's head")
        first = app.screen
        await app.open_session(first.session_id)  # as the picker does, while the answer streams
        await wait_for(pilot, lambda: app.screen is not first and answers(app), "reopened")
        assert answers(app) == ["".join(HEAD)]
        work.go.set()
        await wait_for(pilot, lambda: app.screen.query("TaskEndBlock"), "task end")
        assert answers(app) == ["".join(HEAD + TAIL)]
