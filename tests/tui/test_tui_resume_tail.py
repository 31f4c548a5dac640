"""A resumed session that ends with a long answer shows the answer's end in its first frame: the
blocks that fill the last heights of the view are mounted first, those above after that frame, a
batch at a time, folded while the view follows the end; the person ends up with the whole answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets.markdown import MarkdownBlock

from harnez import events as ev
from harnez.events import Event
from harnez.server.server import Server
from harnez.tui.screens.session import SessionScreen
from harnez.tui.widgets.blocks import AssistantBlock, TaskEndBlock, UserBlock
from harnez.tui.widgets.markdown import AnswerMarkdown, markdown_parser
from harnez.tui.widgets.transcript import FOLD_AFTER, Transcript
from tests.tui.helpers import seed_session, wait_for

PARAGRAPHS = [f"Paragraph {n:03d}: " + " ".join(f"w{n:03d}x{i:02d}" for i in range(40)) for n in range(120)]
ANSWER = "\n\n".join(PARAGRAPHS)


def answer_markdown(transcript: Transcript) -> AnswerMarkdown:
    (block,) = [b for b in transcript.query(AssistantBlock) if b.text == ANSWER]
    return block.query_one(AnswerMarkdown)


async def whole_answer_after_a_page_up(pilot, app, page: list[int]) -> tuple[Transcript, AnswerMarkdown]:
    """Once the resumed session is shown and paged up (`page`) and its long answer is all mounted:
    the transcript and the answer's Markdown."""
    await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen) and page)
    transcript = app.screen.query_one(Transcript)
    markdown = answer_markdown(transcript)
    await wait_for(pilot, lambda: len(sources(markdown)) == len(PARAGRAPHS), "the whole answer mounted")
    return transcript, markdown


def sources(markdown: AnswerMarkdown) -> list[str]:
    return [str(block.source).strip() for block in markdown.children if isinstance(block, MarkdownBlock)]


def in_view(transcript: Transcript, markdown: AnswerMarkdown, paragraph: int) -> bool:
    """Whether that paragraph is displayed, wholly inside the view."""
    (block,) = [
        b for b in markdown.children if str(getattr(b, "source", "")).startswith(PARAGRAPHS[paragraph])
    ]
    return block.display and transcript.scrollable_content_region.contains_region(block.region)


async def long_answer_session(db_path: Path, workspace: Path) -> str:
    server = await Server.open(db_path)
    try:
        return await seed_session(server, workspace, "Write a long answer.", answer=ANSWER)
    finally:
        await server.close()


def rows(markdown: AnswerMarkdown) -> dict[str, int]:
    """Each mounted, displayed paragraph → its row on the screen."""
    return {
        str(block.source).strip(): block.region.y
        for block in markdown.children
        if isinstance(block, MarkdownBlock) and block.display and block.region
    }


async def test_a_resumed_long_answer_shows_its_end_first_and_then_all_of_it(
    make_app, db_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = await long_answer_session(db_path, workspace)

    # What the first frame after the session's events are read can show: the blocks mounted then.
    first: list[list[str]] = []
    load_batch = Transcript.load_batch

    async def first_blocks(self: Transcript, *args, **kwargs) -> None:
        await load_batch(self, *args, **kwargs)
        first.append(sources(answer_markdown(self)))

    monkeypatch.setattr(Transcript, "load_batch", first_blocks)
    app = make_app(resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen) and first)
        transcript = app.screen.query_one(Transcript)
        (mounted,) = first
        assert mounted and mounted[-1] == PARAGRAPHS[-1], "the first frame holds the answer's last words"
        assert len(mounted) < len(PARAGRAPHS) // 4, "and not the whole answer"
        assert mounted == PARAGRAPHS[-len(mounted) :]

        # After that frame the rest comes above, in order, nothing lost; what lies above the last
        # heights of the view is folded, and the view stays at the end.
        markdown = answer_markdown(transcript)
        await wait_for(pilot, lambda: len(sources(markdown)) == len(PARAGRAPHS), "the whole answer mounted")
        await wait_for(pilot, lambda: markdown.shown_blocks <= FOLD_AFTER, "its head folded")
        await pilot.pause(0.1)
        assert sources(markdown) == PARAGRAPHS
        assert transcript.is_vertical_scroll_end
        assert in_view(transcript, markdown, -1)
        folded_height = transcript.virtual_size.height

        # Page Up reaches the first words, every paragraph in its place.
        for _ in range(200):
            if transcript.scroll_y == 0:
                break
            await pilot.press("pageup")
        await pilot.pause(0.1)
        assert in_view(transcript, markdown, 0), "Page Up reaches the answer's first words"
        assert transcript.virtual_size.height == folded_height, "the folded space was as tall as its blocks"
        tops = [block.region.y for block in markdown.children if isinstance(block, MarkdownBlock)]
        assert tops == sorted(tops) and len(set(tops)) == len(PARAGRAPHS)

        # A new width: the end of the answer shown at the end again, folded at the new heights.
        await pilot.resize_terminal(70, 30)
        transcript.scroll_end(animate=False)
        await pilot.pause(0.1)
        transcript._fold_soon()
        await wait_for(pilot, lambda: markdown.shown_blocks <= FOLD_AFTER, "folded again at the new width")
        await pilot.pause(0.1)
        assert in_view(transcript, markdown, -1)

        # The next prompt is answered below it.
        await app.server.submit(session_id, "Thanks.")
        await wait_for(pilot, lambda: len(transcript.query(TaskEndBlock)) == 2, "the second task ends")
        await wait_for(pilot, lambda: transcript.is_vertical_scroll_end, "the view at the end")
        assert any(block.text.startswith("Done:") for block in transcript.query(AssistantBlock))
        assert sources(answer_markdown(transcript)) == PARAGRAPHS


async def test_a_page_up_before_the_answers_first_blocks_are_laid_out_keeps_the_view_in_place(
    make_app, db_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = await long_answer_session(db_path, workspace)
    shown: dict[str, int] = {}
    page: list[int] = []
    load_batch = Transcript.load_batch

    async def page_up_at_once(self: Transcript, *args, **kwargs) -> None:
        await load_batch(self, *args, **kwargs)

        def page_up() -> None:  # after the first frame, before the next layout
            shown.update(rows(answer_markdown(self)))
            page.append(self.scrollable_content_region.height - 1)
            self.screen.action_scroll_transcript(-1)

        self.call_after_refresh(page_up)

    monkeypatch.setattr(Transcript, "load_batch", page_up_at_once)
    app = make_app(resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript, markdown = await whole_answer_after_a_page_up(pilot, app, page)
        await pilot.pause(0.1)
        assert sources(markdown) == PARAGRAPHS
        assert not transcript.is_vertical_scroll_end
        now = rows(markdown)
        assert shown and {key: now[key] - row for key, row in shown.items()} == dict.fromkeys(
            shown, page[0]
        ), "the view moved by the page only: the blocks mounted above did not push it"


PART = """## Section {n}

Text {n} with **bold** and `code`.

- item a{n}
- item b{n}

```python
def f{n}():
    return {n}
```

| a | b |
|---|---|
| {n} | x{n} |
| y{n} | z{n} |

"""
MIXED = "".join(PART.format(n=n) for n in range(40))


async def test_a_resumed_answer_of_lists_fences_and_tables_is_mounted_whole_in_order_and_folded(
    make_app, db_path: Path, workspace: Path
) -> None:
    """Blocks taller than their source (a table, a fence) make the tail taller than guessed, and its
    first blocks lie above the last two heights of the view: the head's next blocks still go above
    them, and each batch is folded as it comes."""
    server = await Server.open(db_path)
    try:
        session_id = await seed_session(server, workspace, "Mixed, please.", answer=MIXED)
    finally:
        await server.close()
    expected = [
        tuple(token.map)
        for token in markdown_parser().parse(MIXED)
        if token.level == 0 and token.nesting >= 0
    ]
    app = make_app(resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        transcript = app.screen.query_one(Transcript)
        # The block (its text set) mounts its Markdown a moment later: wait for both.
        await wait_for(
            pilot,
            lambda: [
                b for b in transcript.query(AssistantBlock) if b.text == MIXED and b.query(AnswerMarkdown)
            ],
        )
        (block,) = [b for b in transcript.query(AssistantBlock) if b.text == MIXED]
        markdown = block.query_one(AnswerMarkdown)
        await wait_for(pilot, lambda: not block.head_pending, "the whole answer mounted")
        await pilot.pause(0.2)
        mounted = [b.source_range for b in markdown.children if isinstance(b, MarkdownBlock)]
        assert mounted == expected, "every block once, in order"
        assert transcript.is_vertical_scroll_end
        assert markdown.shown_blocks <= FOLD_AFTER, "what lies above the last heights of the view is folded"


async def long_answer_then_short_ones(db_path: Path, workspace: Path, short: int) -> str:
    """A stored session: the long answer's exchange, then `short` exchanges of a short answer."""
    server = await Server.open(db_path)
    try:
        session_id = await seed_session(server, workspace, "Write a long answer.", answer=ANSWER)
        for n in range(short):
            await server.append(session_id, Event(ev.UserMessage(text=f"question {n}", mode="prompt")))
            await server.append(session_id, Event(ev.TextDelta(text=f"answer {n}")))
            await server.append(session_id, Event(ev.Finished(stop="completed", turns=1, error=None)))
        return session_id
    finally:
        await server.close()


def user_rows(transcript: Transcript) -> dict[str, int]:
    return {block.text: block.region.y for block in transcript.query(UserBlock) if block.region}


async def test_a_page_up_before_the_older_blocks_of_the_window_are_laid_out_keeps_the_view_in_place(
    make_app, db_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The long answer is in the older part of the window read (mounted after the first frame,
    # `_mount_rest`); the person pages up after that mount, before its layout.
    session_id = await long_answer_then_short_ones(db_path, workspace, 8)
    shown: dict[str, int] = {}
    page: list[int] = []
    mount_rest = Transcript._mount_rest

    async def page_up_after(self: Transcript, rest: list) -> None:
        shown.update(user_rows(self))
        await mount_rest(self, rest)
        before = self.scroll_y
        self.screen.action_scroll_transcript(-1)  # at once (not after the next layout)
        page.append(round(before - self.scroll_y))

    monkeypatch.setattr(Transcript, "_mount_rest", page_up_after)
    app = make_app(resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript, markdown = await whole_answer_after_a_page_up(pilot, app, page)
        await pilot.pause(0.2)
        assert sources(markdown) == PARAGRAPHS
        assert page[0] > 0 and not transcript.is_vertical_scroll_end
        now = user_rows(transcript)
        assert shown and {key: now[key] - row for key, row in shown.items()} == dict.fromkeys(
            shown, page[0]
        ), "the view moved by the page only: the blocks mounted above did not push it"


async def test_an_older_page_with_a_long_answer_mounts_above_without_moving_the_view(
    make_app, db_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The long answer's exchange is older than the blocks mounted when the session is shown: a page
    # read when the person scrolls to the top (`prepend`).
    session_id = await long_answer_then_short_ones(db_path, workspace, 14)
    frames: list[tuple[dict[str, int], dict[str, int]]] = []
    prepend = Transcript.prepend

    async def watched(self: Transcript, *args, **kwargs) -> None:
        before = user_rows(self)
        await prepend(self, *args, **kwargs)
        # The frame that first shows the page laid out (a later scroll would only mend it).
        self.call_after_refresh(lambda: frames.append((before, user_rows(self))))

    monkeypatch.setattr(Transcript, "prepend", watched)
    app = make_app(resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.ready and isinstance(app.screen, SessionScreen))
        transcript = app.screen.query_one(Transcript)
        await wait_for(pilot, lambda: user_rows(transcript) and not transcript.mounting_older)
        assert "Write a long answer." not in user_rows(transcript)
        transcript.scroll_home(animate=False)
        await wait_for(pilot, lambda: frames, "the older page shown")
        markdown = answer_markdown(transcript)
        await wait_for(pilot, lambda: len(sources(markdown)) == len(PARAGRAPHS), "the whole answer mounted")
        await pilot.pause(0.2)
        assert sources(markdown) == PARAGRAPHS
        before, first_frame = frames[0]
        in_view = {key: row for key, row in before.items() if 0 <= row < 30}
        assert in_view and {key: first_frame[key] for key in in_view} == in_view
        assert {key: user_rows(transcript)[key] for key in in_view} == in_view
