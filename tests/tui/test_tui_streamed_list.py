"""A list streamed into an answer keeps the rows of its complete items: an append builds only its last
item again and its new ones, and the list ends as the same list shown whole would be."""

from __future__ import annotations

import itertools
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets._markdown import MarkdownBullet
from textual.widgets.markdown import MarkdownBlock

from harnez.tui.widgets.markdown import AnswerMarkdown, StreamedBulletList, StreamedOrderedList


class Answers(App[None]):
    def compose(self) -> ComposeResult:
        yield AnswerMarkdown()


def drawn(markdown: AnswerMarkdown) -> list[tuple[str, ...]]:
    """Each list row as its bullet and its text, nested rows included, in order."""
    rows = []
    for bullet in markdown.query(MarkdownBullet):
        row = bullet.parent
        assert row is not None
        texts = [str(block._content) for block in row.query(MarkdownBlock) if not block.query(MarkdownBlock)]
        rows.append((bullet.symbol, *texts))
    return rows


async def streamed(text: str, step: int) -> tuple[list[tuple[str, ...]], list[list[int]]]:
    """What `text` streamed `step` characters at a time draws, and the ids of the top list's rows
    after each append."""
    app = Answers()
    ids: list[list[int]] = []
    async with app.run_test(size=(80, 40)) as pilot:
        markdown = app.query_one(AnswerMarkdown)
        for at in range(0, len(text), step):
            await markdown.append(text[at : at + step])
            await pilot.pause()
            lists = [b for b in markdown.children if isinstance(b, StreamedBulletList | StreamedOrderedList)]
            if lists:
                ids.append([id(row) for row in lists[0].children])
        return drawn(markdown), ids


async def whole(text: str) -> list[tuple[str, ...]]:
    app = Answers()
    async with app.run_test(size=(80, 40)) as pilot:
        markdown = app.query_one(AnswerMarkdown)
        await markdown.append(text)
        await pilot.pause()
        return drawn(markdown)


def item_lines(count: int, marker: str) -> str:
    return "".join(f"{marker.format(n=n + 1)} item number {n + 1} of the list\n" for n in range(count))


async def test_a_streamed_bullet_list_keeps_its_complete_rows_and_ends_as_one_shown_whole() -> None:
    text = "Steps:\n\n" + item_lines(24, "-") + "\nDone.\n"
    rows, ids = await streamed(text, 17)
    assert rows == await whole(text)
    assert len(rows) == 24 and rows[0] == ("• ", "item number 1 of the list")
    # Textual's list built every row again at each append; here a row, once its item is followed by
    # another, stays the same widget to the end.
    first_rows = [row_ids[0] for row_ids in ids if len(row_ids) >= 3]
    assert len(first_rows) > 15 and len(set(first_rows)) == 1
    assert ids[-1][:15] == next(row_ids for row_ids in ids if len(row_ids) >= 16)[:15]
    # An append that only lengthens the last item's text updates its row in place (one that turns an
    # empty item, a lone "-", into one with text builds it).
    same_count = [(a, b) for a, b in itertools.pairwise(ids) if len(a) == len(b) >= 3]
    in_place = sum(a[-1] == b[-1] for a, b in same_count)
    assert in_place >= len(same_count) / 2 > 0, (in_place, len(same_count))


async def test_a_streamed_numbered_list_is_numbered_and_padded_as_one_shown_whole() -> None:
    text = item_lines(12, "{n}.") + "\n" + item_lines(3, "{n})")  # a second list: another delimiter
    rows, _ = await streamed(text, 9)
    expected = await whole(text)
    assert rows == expected
    assert [row[0] for row in rows[:12]] == [f"{n}. ".rjust(5) for n in range(1, 13)], "padded to item 12"


async def test_nested_and_loose_items_stream_as_they_show_whole() -> None:
    text = (
        "- first\n- second\n\n- third, loose\n  - nested one\n  - nested two\n"
        "- fourth\n\n  with a second paragraph\n- fifth\n\n1. a\n1. b\n1. c\n"
    )
    for step in (2, 9):
        rows, _ = await streamed(text, step)
        assert rows == await whole(text), f"streamed {step} characters at a time"


def test_the_mixin_comes_first_so_the_lists_keep_textuals_css_names() -> None:
    names: Any = StreamedBulletList._css_type_names
    assert "MarkdownBulletList" in names and "MarkdownOrderedList" in StreamedOrderedList._css_type_names
