"""A live event's blocks are painted by the next frame on their own, with no other message to the screen."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import Markdown

from harnez import events as ev
from harnez.events import EventBody, StoredEvent
from harnez.tui.widgets.blocks import AssistantBlock
from harnez.tui.widgets.transcript import Transcript


class TranscriptApp(App[None]):
    """A screen holding only a transcript: nothing else (no prompt's cursor, no status line) ever asks
    the screen for a frame, so whatever is painted was asked for by the transcript itself."""

    def __init__(self) -> None:
        super().__init__()
        self.painted: list[str] = []
        """The text of every frame painted, oldest first."""

    def compose(self) -> ComposeResult:
        yield Transcript()

    def _display(self, screen: Any, renderable: Any) -> None:
        if renderable is not None:
            self.painted.append(Text.from_ansi(renderable.render_segments(self.console)).plain)
        super()._display(screen, renderable)


def stored(seq: int, body: EventBody) -> StoredEvent:
    return StoredEvent(session="s1", seq=seq, task=1, time=time.time(), body=body)


async def painted(app: TranscriptApp, text: str) -> None:
    """Let the loop run until a frame shows `text`; fail after 30 s (a limit for a hang, not a timing
    assertion). Plain sleeps: a Pilot pause paints a frame itself, which would hide a missing one."""
    deadline = time.monotonic() + 30.0
    while not any(text in frame for frame in app.painted):
        if time.monotonic() > deadline:
            raise AssertionError(f"Never painted: {text!r}")
        await asyncio.sleep(0.01)


async def test_an_answers_first_words_are_painted_once_its_first_delta_is_shown() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.screen.query_one(Transcript)
        await pilot.pause()
        await transcript.apply(stored(1, ev.UserMessage(text="Tell me about quokkas.")))
        await painted(app, "Tell me about quokkas.")
        await transcript.apply(stored(2, ev.TurnStarted(turn=1)))
        await transcript.apply(stored(3, ev.TextDelta(text="Quokkas smile")))
        await painted(app, "Quokkas smile")


def shown(transcript: Transcript) -> list[str]:
    """The kinds of the blocks on screen (hidden ones left out), in order."""
    return [type(block).__name__ for block in transcript.children if block.display]


async def test_a_turns_first_words_take_the_answer_block_mounted_when_the_turn_started() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.screen.query_one(Transcript)
        await pilot.pause()
        await transcript.apply(stored(1, ev.UserMessage(text="Tell me about quokkas.")))
        await transcript.apply(stored(2, ev.TurnStarted(turn=1)))
        waiting = list(transcript.children)
        assert shown(transcript) == ["UserBlock"] and len(waiting) == 2
        await transcript.apply(stored(3, ev.TextDelta(text="Quokkas smile")))
        assert list(transcript.children) == waiting  # nothing mounted for the first words
        assert shown(transcript) == ["UserBlock", "AssistantBlock"]
        await painted(app, "Quokkas smile")
        await transcript.apply(stored(4, ev.Finished(stop="completed", turns=1)))
        spare = transcript.children[-1]  # the next prompt's answer block, ready when the task ends
        assert isinstance(spare, AssistantBlock) and not spare.display and spare not in waiting


def markdown_blocks(block: AssistantBlock) -> list[str]:
    return [type(child).__name__ for child in block.query_one(Markdown).children]


async def test_a_turns_first_words_fill_the_paragraph_mounted_before_them() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.screen.query_one(Transcript)
        await pilot.pause()
        await transcript.apply(stored(1, ev.UserMessage(text="Tell me about quokkas.")))
        await transcript.apply(stored(2, ev.TurnStarted(turn=1)))
        spare = transcript.children[-1]
        assert isinstance(spare, AssistantBlock)
        paragraph = spare.query_one(Markdown).children[0]
        assert markdown_blocks(spare) == ["StreamedParagraph"]
        await transcript.apply(stored(3, ev.TextDelta(text="Quokkas smile")))
        assert spare.query_one(Markdown).children[0] is paragraph  # filled in, not mounted for them
        await painted(app, "Quokkas smile")
        await transcript.apply(stored(4, ev.Finished(stop="completed", turns=1)))
        # Words that do not start with a paragraph replace it.
        spare = transcript.children[-1]
        assert isinstance(spare, AssistantBlock)
        await transcript.apply(stored(5, ev.UserMessage(text="And wombats?")))
        await transcript.apply(stored(6, ev.TurnStarted(turn=1)))
        await transcript.apply(stored(7, ev.TextDelta(text="# Wombats\n\nThey dig.")))
        await painted(app, "They dig.")
        assert markdown_blocks(spare) == ["MarkdownH1", "StreamedParagraph"]
        assert spare.query_one(Markdown).source == "# Wombats\n\nThey dig."


async def test_a_turns_other_output_goes_before_its_waiting_answer_block() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.screen.query_one(Transcript)
        await pilot.pause()
        await transcript.apply(stored(1, ev.UserMessage(text="Fix it.")))
        await transcript.apply(stored(2, ev.TurnStarted(turn=1)))
        await transcript.apply(stored(3, ev.ReasoningDelta(text="Look first.")))
        await transcript.apply(
            stored(4, ev.ToolRequested(call_id="c1", name="read", arguments={"path": "a"}))
        )
        await transcript.apply(
            stored(5, ev.ToolCompleted(call_id="c1", name="read", content="x", is_error=False))
        )
        await transcript.apply(stored(6, ev.TurnStarted(turn=2)))
        await transcript.apply(stored(7, ev.TextDelta(text="Fixed it.")))
        assert shown(transcript) == ["UserBlock", "ReasoningBlock", "ToolBlock", "AssistantBlock"]
        await painted(app, "Fixed it.")


async def test_a_waiting_answer_block_stays_hidden_and_last_until_a_turn_has_words() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.screen.query_one(Transcript)
        await pilot.pause()
        await transcript.follow([], has_older=False)
        spare = transcript.children[-1]
        await transcript.apply(stored(1, ev.UserMessage(text="Hello?")))
        await transcript.apply(stored(2, ev.TurnStarted(turn=1)))
        await transcript.apply(stored(3, ev.Finished(stop="failed", turns=1, error="The provider refused.")))
        await transcript.apply(stored(4, ev.UserMessage(text="Again?")))
        await transcript.apply(stored(5, ev.TurnStarted(turn=1)))
        assert shown(transcript) == ["UserBlock", "TaskEndBlock", "UserBlock"]
        assert list(transcript.children)[-1] is spare and len(transcript.children) == 4
        assert [type(block).__name__ for block in transcript.blocks] == shown(transcript)
        await transcript.apply(stored(6, ev.TextDelta(text="Yes.")))
        assert shown(transcript) == ["UserBlock", "TaskEndBlock", "UserBlock", "AssistantBlock"]
        await painted(app, "Yes.")


async def test_a_task_s_last_events_reaching_a_transcript_whose_screen_is_gone_are_dropped() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.screen.query_one(Transcript)
        await transcript.apply(stored(1, ev.UserMessage(text="Tell me about quokkas.")))
        await transcript.remove()  # its session's screen closed (the app quitting, another session shown)
        await pilot.pause()
        await transcript.apply(stored(2, ev.TextDelta(text="Quokkas smile")))
        await transcript.apply(stored(3, ev.Finished(stop="completed", turns=1)))
        assert not transcript.is_attached and not any("Quokkas smile" in frame for frame in app.painted)
