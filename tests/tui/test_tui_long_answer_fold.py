"""A long answer's first blocks are folded while the view follows its end: hidden, their place kept,
so that each frame lays out a few screens of blocks, not the whole answer; scrolling up shows them."""

from __future__ import annotations

import asyncio

from textual.widget import Widget
from textual.widgets.markdown import MarkdownBlock

from harnez import events as ev
from harnez.server.runner import TaskOutcome, TaskRun
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import AssistantBlock, TaskEndBlock
from harnez.tui.widgets.markdown import AnswerMarkdown, FoldedSpace, StreamedBulletList
from harnez.tui.widgets.transcript import FOLD_AFTER, Transcript
from tests.tui.helpers import wait_for

PARAGRAPHS = 150


def paragraph(n: int) -> str:
    return f"Paragraph {n:03d}: " + "the quick brown fox jumps over the lazy dog " * 3 + "\n\n"


async def long_answer(run: TaskRun) -> TaskOutcome:
    """One answer of `PARAGRAPHS` paragraphs, streamed a paragraph at a time."""
    run.emit(ev.TurnStarted(turn=1))
    for n in range(PARAGRAPHS):
        run.emit(ev.TextDelta(text=paragraph(n)))
        await asyncio.sleep(0.01)
    await run.emit_now(ev.TurnCompleted(turn=1, stop_reason="end"))
    return TaskOutcome("completed", 1)


def answer_markdown(transcript: Transcript) -> AnswerMarkdown:
    blocks = [b for b in transcript.query(AssistantBlock) if b.text]
    return blocks[-1].query_one(AnswerMarkdown)


def hidden(markdown: AnswerMarkdown) -> list[MarkdownBlock]:
    return [b for b in markdown.children if isinstance(b, MarkdownBlock) and not b.display]


def rows(markdown: AnswerMarkdown) -> dict[str, int]:
    """Each shown paragraph's first words → its row on the screen."""
    return {
        str(block.source)[:13]: block.region.y
        for block in markdown.children
        if isinstance(block, MarkdownBlock) and block.display
    }


async def streamed(pilot, app) -> tuple[Transcript, AnswerMarkdown]:
    """The transcript and the answer's Markdown, once the task ended; asserts that the first
    paragraphs were folded while the answer streamed."""
    await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
    transcript = app.screen.query_one(Transcript)
    await app.server.submit(app.screen.session_id, "Write a long answer.")

    def folded_or_ended() -> bool:
        answers = [b for b in transcript.query(AssistantBlock) if b.text]
        return bool(transcript.query(TaskEndBlock) or (answers and hidden(answer_markdown(transcript))))

    await wait_for(pilot, folded_or_ended, "the first paragraphs folded")
    assert not transcript.query(TaskEndBlock), "folded while the answer streamed"
    await wait_for(pilot, lambda: transcript.query(TaskEndBlock), "the task ends")
    markdown = answer_markdown(transcript)
    await pilot.pause(0.1)
    return transcript, markdown


async def test_a_long_answer_folds_its_first_paragraphs_and_shows_them_again_when_scrolled_to(
    make_app,
) -> None:
    app = make_app(work=long_answer)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript, markdown = await streamed(pilot, app)
        view = transcript.scrollable_content_region.height
        assert markdown.shown_blocks <= FOLD_AFTER + 1
        assert len(hidden(markdown)) >= PARAGRAPHS - FOLD_AFTER - 1
        space = markdown.query_one(FoldedSpace)
        assert space.region.height > 2 * view, "the folded paragraphs keep their place"
        assert transcript.is_vertical_scroll_end
        last = rows(markdown)
        height = transcript.virtual_size.height
        assert "Paragraph 149" in last

        # A page up: everything is shown again, and nothing moved (the same height, same rows).
        await pilot.press("pageup")
        await pilot.pause(0.1)
        assert not hidden(markdown) and not markdown.query(FoldedSpace)
        assert transcript.virtual_size.height == height
        now = rows(markdown)
        shift = now["Paragraph 149"] - last["Paragraph 149"]
        assert shift == view - 1, "scrolled by one page, as an unfolded answer would"
        assert all(now[key] - row == shift for key, row in last.items())
        first_rows = [now[f"Paragraph {n:03d}"] for n in range(PARAGRAPHS)]
        assert first_rows == sorted(first_rows) and len(set(first_rows)) == PARAGRAPHS

        # Back at the end, the next layout folds them again; the end of the answer stays in place.
        transcript.scroll_end(animate=False)
        await pilot.pause(0.1)
        transcript._fold_soon()
        await wait_for(pilot, lambda: hidden(markdown), "folded again at the end")
        await pilot.pause(0.1)
        assert rows(markdown)["Paragraph 149"] == last["Paragraph 149"]
        assert transcript.virtual_size.height == height


async def test_a_new_width_unfolds_and_folds_again_with_the_new_heights(make_app) -> None:
    app = make_app(work=long_answer)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript, markdown = await streamed(pilot, app)
        await pilot.resize_terminal(60, 30)
        await pilot.pause(0.2)
        await wait_for(pilot, lambda: hidden(markdown), "folded again at the new width")
        await pilot.pause(0.1)
        folded_height = transcript.virtual_size.height
        bottom = rows(markdown)["Paragraph 149"]

        transcript.unfold()
        # laid out once the unfolded paragraphs are measured (a bound on waiting, on a loaded machine
        # a fixed pause was sometimes one layout short)
        await wait_for(
            pilot,
            lambda: (
                transcript.virtual_size.height == folded_height and rows(markdown)["Paragraph 149"] == bottom
            ),
            "the space as tall as its paragraphs, the last one where it was",
        )


async def long_list(run: TaskRun) -> TaskOutcome:
    """One answer that is a list of `PARAGRAPHS` items, streamed an item at a time."""
    run.emit(ev.TurnStarted(turn=1))
    run.emit(ev.TextDelta(text="The items:\n\n"))
    for n in range(PARAGRAPHS):
        run.emit(ev.TextDelta(text=f"- item {n:03d}\n"))
        await asyncio.sleep(0.01)
    await run.emit_now(ev.TurnCompleted(turn=1, stop_reason="end"))
    return TaskOutcome("completed", 1)


async def test_a_long_list_folds_its_first_rows_and_shows_them_again_when_scrolled_to(make_app) -> None:
    app = make_app(work=long_list)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        transcript = app.screen.query_one(Transcript)
        await app.server.submit(app.screen.session_id, "List them.")
        await wait_for(pilot, lambda: transcript.query(TaskEndBlock), "the task ends")
        the_list = answer_markdown(transcript).query_one(StreamedBulletList)

        def rows() -> list[Widget]:
            return [row for row in the_list.children if not isinstance(row, FoldedSpace)]

        await wait_for(pilot, lambda: not rows()[0].display, "the first rows folded")
        await pilot.pause(0.1)
        assert len(rows()) == PARAGRAPHS
        hidden_rows = [row for row in rows() if not row.display]
        assert len(hidden_rows) >= PARAGRAPHS - 3 * transcript.scrollable_content_region.height
        assert the_list.query_one(FoldedSpace).styles.height.value == len(hidden_rows)
        height = transcript.virtual_size.height

        await pilot.press("pageup")
        await pilot.pause(0.1)
        assert all(row.display for row in rows()) and not the_list.query(FoldedSpace)
        assert transcript.virtual_size.height == height
        tops = [row.region.y for row in rows()]
        assert tops == list(range(tops[0], tops[0] + PARAGRAPHS)), "one row an item, none missing"


async def test_an_answer_unfolded_by_a_scroll_up_folds_again_once_scrolled_back_down(make_app) -> None:
    app = make_app(work=long_answer)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript, markdown = await streamed(pilot, app)
        assert hidden(markdown)
        height = transcript.virtual_size.height
        for _ in range(3):
            await pilot.press("pageup")
        await pilot.pause(0.1)
        assert not hidden(markdown), "shown again while the person reads up"

        # A page down: the blocks now well above the view fold again (the task ended: no stream asks
        # for it), and what is shown does not move.
        await pilot.press("pagedown")
        await pilot.pause(0.1)
        shown = {key: row for key, row in rows(markdown).items() if 0 <= row < 30}
        await pilot.pause(0.2)
        assert hidden(markdown), "folded again out of view"
        assert not transcript.is_vertical_scroll_end
        assert {key: rows(markdown).get(key) for key in shown} == shown
        assert transcript.virtual_size.height == height

        # Back at the end, the rest of what is out of view folds too, the end where it was.
        transcript.scroll_end(animate=False)
        await pilot.pause(0.3)
        assert transcript.is_vertical_scroll_end
        assert markdown.shown_blocks <= FOLD_AFTER + 1
        assert transcript.virtual_size.height == height
