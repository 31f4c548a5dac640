"""A streaming answer's layouts: one per change of its height, the transcript still following the end."""

from __future__ import annotations

from typing import Any

from harnez.tui.widgets.blocks import AssistantBlock, UserBlock
from harnez.tui.widgets.markdown import StreamedParagraph
from harnez.tui.widgets.prompt import PromptInput
from harnez.tui.widgets.transcript import Transcript
from tests.tui.helpers import FedWork, shown_answer, wait_for

WORDS = "stream render frame widget markdown token answer prompt layout update "
"""Ten words, 70 characters: a few of them wrap an answer's paragraph onto a new line at 80 columns."""


async def start_answer(pilot: Any, work: FedWork, first: str) -> AssistantBlock:
    """Send a prompt; the answer's block once it shows `first`."""
    app = pilot.app
    await wait_for(pilot, lambda: app.ready, "session attached")
    app.screen.query_one(PromptInput).load_text("Stream, please.")
    await pilot.press("enter")
    work.pieces.put_nowait(first)
    await wait_for(
        pilot, lambda: [b for b in app.screen.query(AssistantBlock) if b.display], "the answer's block"
    )
    block = shown_answer(app.screen)
    await wait_for(pilot, lambda: block.size.height > 0 and block.text == first, "the first words")
    await pilot.pause(0.1)
    return block


def count_layouts(screen: Any) -> list[bool]:
    """A list that gets an item for every layout of `screen` from now on."""
    layouts: list[bool] = []
    refresh_layout = screen._refresh_layout

    def counted(*args: Any, **kwargs: Any) -> None:
        layouts.append(True)
        refresh_layout(*args, **kwargs)

    screen._refresh_layout = counted
    return layouts


async def test_a_new_answer_is_painted_with_its_first_words_never_empty(make_app) -> None:
    work = FedWork()
    app = make_app(work=work)
    async with app.run_test(size=(80, 30)) as pilot:
        await wait_for(pilot, lambda: app.ready, "session attached")
        app.screen.query_one(PromptInput).load_text("Stream, please.")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query(UserBlock), "the prompt in the transcript")
        screen = app.screen
        painted: list[list[int]] = []
        compositor_refresh = screen._compositor_refresh

        def paint() -> None:
            painted.append([len(block.query(StreamedParagraph)) for block in screen.query(AssistantBlock)])
            compositor_refresh()

        screen._compositor_refresh = paint  # type: ignore[method-assign]
        work.pieces.put_nowait("Streaming: " + WORDS)
        await wait_for(pilot, lambda: any(frame for frame in painted), "a frame with the answer")
        await pilot.pause(0.2)
        assert [frame for frame in painted if 0 in frame] == []
        work.pieces.put_nowait(None)


async def test_an_answer_that_grows_by_a_line_is_laid_out_once(make_app) -> None:
    work = FedWork()
    app = make_app(work=work)
    async with app.run_test(size=(80, 30)) as pilot:
        block = await start_answer(pilot, work, "Streaming: ")
        layouts = count_layouts(app.screen)
        height = block.size.height
        work.pieces.put_nowait(WORDS)
        await wait_for(pilot, lambda: block.size.height > height, "the answer taller by a line")
        await pilot.pause(0.2)
        assert len(layouts) == 1
        work.pieces.put_nowait(None)


async def test_the_transcript_follows_a_long_streamed_answer_to_its_end(make_app) -> None:
    work = FedWork()
    app = make_app(work=work)
    async with app.run_test(size=(80, 30)) as pilot:
        await start_answer(pilot, work, "Streaming: ")
        transcript = app.screen.query_one(Transcript)
        for index in range(30):
            work.pieces.put_nowait(WORDS + ("\n\n" if index % 4 == 3 else ""))
            await pilot.pause(0.02)
        work.pieces.put_nowait("the last words")
        await wait_for(pilot, lambda: transcript.max_scroll_y > 0, "an answer taller than the screen")
        await wait_for(
            pilot,
            lambda: "the last words" in shown_answer(app.screen).text,
            "the last piece",
        )
        await pilot.pause(0.2)
        assert transcript.scroll_y == transcript.max_scroll_y
        last = shown_answer(app.screen).query(StreamedParagraph).last()
        assert "the last words" in str(last.content)
        assert last.region and transcript.region.contains_region(last.region)
        work.pieces.put_nowait(None)
