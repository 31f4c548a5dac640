"""A steering message sent, or a `!` line ended, while an answer streams does not cut the answer in two.

The message is stored as it is sent, between the answer's deltas; the model reads it at its next
turn. The answer went on in a second block below it, parsed on its own: the rest of a code fence
showed as prose and its closing ``` opened a fence that swallowed everything after.
"""

from __future__ import annotations

import asyncio

from textual.widgets import Static

from harnez import events as ev
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.testing.scripted_model import ScriptedModel
from harnez.tui.widgets.blocks import AssistantBlock, UserBlock
from harnez.tui.widgets.prompt import PromptInput
from tests.agent.helpers import answer
from tests.tui.helpers import AgentApp, wait_for

HEAD = "Here:\n\n```python\ndef double(x):\n"
TAIL = "    return x * 2\n```\n\nThat is all.\n"


class FenceWork:
    """Streams the head of a fenced answer, waits for a steering message, then streams the rest and
    delivers the message, as the agent's loop does at the next turn."""

    def __init__(self) -> None:
        self.steered = asyncio.Event()

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        run.emit(ev.TurnStarted(turn=1))
        await run.emit_now(ev.TextDelta(text=HEAD))
        while not run.steering.qsize():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # the steering message is stored before the rest streams
        await run.emit_now(ev.TextDelta(text=TAIL))
        for text in run.take_steering():
            await run.emit_now(ev.SteeringDelivered(text=text))
        return TaskOutcome("completed", 1)


def answers(app) -> list[str]:
    return [block.text for block in app.screen.query(AssistantBlock) if block.display]


async def typed_mid_answer(pilot, app, text: str, key: str) -> None:
    """Send a prompt, then `text` with `key` once the answer's head shows; the answer ends whole."""
    await wait_for(pilot, lambda: app.ready)
    prompt = app.screen.query_one(PromptInput)
    prompt.load_text("write double")
    await pilot.press("enter")
    await wait_for(pilot, lambda: answers(app) == [HEAD], "the answer's head")
    prompt.load_text(text)
    await pilot.press(key)
    await wait_for(pilot, lambda: app.screen.query("TaskEndBlock"), "task end")
    assert answers(app) == [HEAD + TAIL], "one answer, its fence whole"


async def test_a_steering_message_mid_answer_leaves_the_answer_whole(make_app) -> None:
    app = make_app(FenceWork())
    async with app.run_test(size=(100, 40)) as pilot:
        await typed_mid_answer(pilot, app, "use a lambda", "ctrl+s")
        steering = app.screen.query_one("UserBlock.-steering", UserBlock)
        (answer,) = [block for block in app.screen.query(AssistantBlock) if block.display]
        assert answer.region.y < steering.region.y, "the message shows below the answer it came during"

        first = app.screen
        await app.open_session(first.session_id)  # drawn again from the stored events: the same
        await wait_for(pilot, lambda: app.screen is not first and app.screen.query("TaskEndBlock"))
        assert answers(app) == [HEAD + TAIL]


class ShellLineWork:
    """Streams the head of a fenced answer, waits for a `!` line to be stored, then streams the rest."""

    def __init__(self, server_of) -> None:
        self.server_of = server_of

    async def __call__(self, run: TaskRun) -> TaskOutcome:
        run.emit(ev.TurnStarted(turn=1))
        await run.emit_now(ev.TextDelta(text=HEAD))
        server = self.server_of()
        while not [e for e in await server.events_after(run.session.id) if e.kind == "shell-line"]:
            await asyncio.sleep(0.01)
        await run.emit_now(ev.TextDelta(text=TAIL))
        return TaskOutcome("completed", 1)


async def test_a_shell_line_ending_mid_answer_leaves_the_answer_whole(make_app) -> None:
    """A `!` line the person ran while the answer streamed is stored when it ends, between the
    answer's deltas: it closed the answer too, and the rest of the fence showed as prose."""
    app = make_app(ShellLineWork(lambda: app.server))
    async with app.run_test(size=(100, 40)) as pilot:
        await typed_mid_answer(pilot, app, "!echo side-note", "enter")


HELD_ANSWER = {
    "reply": [{"text": ["Looking ", "at ", "the ", "code ", "now."]}],
    "hold": "gate",
    "hold_after_chunks": 3,
}
"""A scripted answer whose head streams, the rest held until the test releases `gate`."""


async def steered_while_held(pilot, app) -> PromptInput:
    """Send a prompt, then 'use a lambda' with Ctrl+S once the held answer's head shows."""
    await wait_for(pilot, lambda: app.ready)
    prompt = app.screen.query_one(PromptInput)
    prompt.load_text("write double")
    await pilot.press("enter")
    await wait_for(pilot, lambda: any(text.startswith("Looking") for text in answers(app)), "the head")
    prompt.load_text("use a lambda")
    await pilot.press("ctrl+s")
    return prompt


async def test_a_steering_message_shows_where_the_model_reads_it(
    agent_app: AgentApp, scripted_model: ScriptedModel
) -> None:
    """Sent while an answer streamed, a steering message was drawn below that answer at once, the rest
    of the answer streaming on above it: it seemed to come after words the model wrote before reading
    it. It waits above the prompt until the model's next turn takes it (`steering-delivered`), then
    shows in the transcript there: after the first answer, before the one written having read it."""
    scripted_model.add(HELD_ANSWER, answer("Using a lambda then."))
    app = agent_app()
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = await steered_while_held(pilot, app)
        await wait_for(pilot, lambda: not prompt.text, "sent")
        await pilot.pause(0.3)  # its stored user-message reached the screen
        assert not app.screen.query("UserBlock.-steering"), "not in the transcript before the model reads it"
        waits = app.screen.query_one("#steering-waits", Static)
        await wait_for(
            pilot, lambda: waits.display and "use a lambda" in str(waits.render()), "shown waiting"
        )
        scripted_model.release("gate")
        await wait_for(pilot, lambda: app.screen.query("TaskEndBlock"), "task end")
        await pilot.pause(0.1)
        assert not waits.display
        assert answers(app) == ["Looking at the code now.", "Using a lambda then."], "the first answer whole"
        order = [
            (type(block).__name__, getattr(block, "text", ""))
            for block in app.screen.query("UserBlock, AssistantBlock")
            if block.display
        ]
        assert order == [
            ("UserBlock", "write double"),
            ("AssistantBlock", "Looking at the code now."),
            ("UserBlock", "use a lambda"),
            ("AssistantBlock", "Using a lambda then."),
        ]

        first = app.screen
        await app.open_session(first.session_id)  # drawn again from the stored events: the same
        await wait_for(pilot, lambda: app.screen is not first and app.screen.query("TaskEndBlock"))
        again = [
            (type(block).__name__, getattr(block, "text", ""))
            for block in app.screen.query("UserBlock, AssistantBlock")
            if block.display
        ]
        assert again == order


async def test_a_steering_message_the_task_never_read_says_so(
    agent_app: AgentApp, scripted_model: ScriptedModel
) -> None:
    """Esc before the model's next turn: the message was never delivered, and the transcript says so."""
    scripted_model.add(HELD_ANSWER)
    app = agent_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await steered_while_held(pilot, app)
        waits = app.screen.query_one("#steering-waits", Static)
        await wait_for(pilot, lambda: waits.display, "shown waiting")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen.query("TaskEndBlock"), "task end")
        await pilot.pause(0.1)
        (block,) = app.screen.query("UserBlock.-undelivered").results(UserBlock)
        assert block.text == "use a lambda" and "not delivered" in str(block.render())
        assert not waits.display
