"""Scrolled up while an answer streams: a quiet line says new output arrived below, once (not a frame
per delta), and Ctrl+End brings the view back to the end and has it follow the stream again."""

from __future__ import annotations

from typing import Any

import pytest

from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.transcript import Transcript
from tests.tui.helpers import FedWork, wait_for

PARAGRAPH = "A paragraph of the long answer, long enough to wrap at eighty columns wide, or nearly so.\n\n"


async def feed(pilot: Any, work: FedWork, pieces: int, mark: str) -> None:
    """Stream `pieces` paragraphs, the last one holding `mark`, and wait until it is shown."""
    for n in range(pieces):
        work.pieces.put_nowait(PARAGRAPH if n < pieces - 1 else f"{mark} {PARAGRAPH}")
    transcript = pilot.app.screen.query_one(Transcript)
    await wait_for(pilot, lambda: mark in str(transcript.query("AnswerMarkdown").last().source), mark)
    await pilot.pause()


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What every `Transcript.OutputBelow` posted said, in order."""
    posted: list[bool] = []
    post = Transcript.post_message

    def recording(self: Transcript, message: Any) -> bool:
        if isinstance(message, Transcript.OutputBelow):
            posted.append(message.arrived)
        return post(self, message)

    monkeypatch.setattr(Transcript, "post_message", recording)
    return posted


async def test_output_below_a_scrolled_up_view_is_signed_once_and_ctrl_end_follows_again(
    make_app, said: list[bool]
) -> None:
    work = FedWork()
    app = make_app(work)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.ready, "session attached")
        app.screen.query_one(PromptInput).load_text("Write a long answer.")
        await pilot.press("enter")
        await feed(pilot, work, 20, "FIRST-PART")
        transcript = app.screen.query_one(Transcript)
        sign = app.screen.query_one("#output-below")
        await wait_for(pilot, lambda: transcript.max_scroll_y > 10, "an answer taller than the view")
        assert transcript.scroll_y == transcript.max_scroll_y and not sign.display

        await pilot.press("pageup")
        await pilot.pause()
        assert transcript.scroll_y < transcript.max_scroll_y
        assert not sign.display, "nothing arrived yet since the view was released"
        await feed(pilot, work, 15, "SECOND-PART")
        assert sign.display and sign.region.height == 1
        assert "new output below (Ctrl+End)" in str(sign.render())
        assert said == [True], "one message for the whole stream, not one per delta"
        assert transcript.scroll_y < transcript.max_scroll_y - 10, "the released view stays put"

        await pilot.press("ctrl+end")
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y
        assert not sign.display
        await feed(pilot, work, 15, "THIRD-PART")
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y, "it follows the stream again"
        assert not sign.display and said == [True, False]

        await pilot.press("pageup")
        await feed(pilot, work, 3, "FOURTH-PART")
        assert sign.display
        await pilot.press("pagedown", "pagedown", "pagedown", "pagedown")
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y and not sign.display
        assert said == [True, False, True, False]
        work.pieces.put_nowait(None)
