"""A list streamed into an answer keeps the rows of its complete items: an append builds only its last
item again and its new ones, and the list ends as the same list shown whole would be."""

from __future__ import annotations

import itertools
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBullet
from textual.widgets.markdown import MarkdownBlock

from harnez.tui.widgets.markdown import AnswerMarkdown, BulletRow, StreamedBulletList, StreamedOrderedList


class Answers(App[None]):
    def compose(self) -> ComposeResult:
        yield AnswerMarkdown()


def drawn(markdown: AnswerMarkdown) -> list[tuple[str, ...]]:
    """Each list row as its bullet and its text, nested rows included, in order."""
    rows = []
    for widget in markdown.query("MarkdownBullet, BulletRow"):
        if isinstance(widget, BulletRow):
            rows.append((widget.symbol, str(widget._content)))
            continue
        assert isinstance(widget, MarkdownBullet) and widget.parent is not None
        blocks = widget.parent.query(MarkdownBlock)
        texts = [str(block._content) for block in blocks if not block.query(MarkdownBlock)]
        rows.append((widget.symbol, *texts))
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


async def test_a_streamed_list_is_parsed_from_its_last_item_on(markdown_parses: list[str]) -> None:
    text = "Steps:\n\n" + item_lines(40, "{n}.") + "\nDone.\n"
    rows, _ = await streamed(text, 13)
    assert rows == await whole(text)
    # Textual parsed the list from its first item at every append: 40 items at the end.
    items_parsed = [source.count("item number") for source in markdown_parses[: len(markdown_parses) - 1]]
    assert max(items_parsed[len(items_parsed) // 3 :]) <= 2, items_parsed


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


class Both(App[None]):
    """Textual's own Markdown above, the answer's below, showing the same text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield Markdown(self.text)
        yield AnswerMarkdown(self.text)


async def test_a_row_of_one_paragraph_is_one_widget_drawn_as_textuals_row_of_four() -> None:
    text = (
        "- first item with **strong** words, enough of them to wrap over the end of the line\n"
        "- second, with `code` and a [link](https://example.org)\n  - nested one\n- third\n\n"
        "9. nine\n10. ten\n"
    )
    app = Both(text)
    async with app.run_test(size=(44, 40)) as pilot:
        await pilot.pause(0.3)
        ours = app.query_one(AnswerMarkdown)
        lists = [
            block for block in ours.children if isinstance(block, StreamedBulletList | StreamedOrderedList)
        ]
        # Rows of one paragraph: one widget each (Textual's are a row, the symbol, a column, the
        # paragraph); the row holding a nested list stays Textual's.
        assert [type(row).__name__ for row in lists[0].children] == ["BulletRow", "Horizontal", "BulletRow"]
        assert all(isinstance(row, BulletRow) for row in lists[1].children)
        theirs = app.query_one(Markdown)
        strips = app.screen._compositor.render_strips()

        def region_lines(widget: Any) -> list[str]:
            return [
                "".join(s.text for s in strip) for strip in strips[widget.region.y : widget.region.bottom]
            ]

        def symbols(widget: Any) -> list[tuple[str, Any]]:
            drawn = [s for strip in strips[widget.region.y : widget.region.bottom] for s in strip]
            return [
                (s.text.strip(), s.style and s.style.color)
                for s in drawn
                if s.text.strip() in ("•", "▪", "9.", "10.")
            ]

        assert region_lines(ours) == region_lines(theirs)
        assert any(line.startswith("    of them to wrap over the end") for line in region_lines(ours))
        assert len(symbols(ours)) == 6 and symbols(ours) == symbols(theirs)  # the same colour


async def test_an_item_marker_split_after_an_item_ending_in_a_table_continues_the_list() -> None:
    # After a table (or a fence) in an item no paragraph continues: a lone `3` is a paragraph that
    # closes the list until `. c` comes; the list then goes on, one list as shown whole.
    text = "1. a\n   - nested x\n   - nested y\n2. b\n   | t | u |\n   |---|---|\n   | 1 | 2 |\n3. c\n"
    cut = text.index("3. c") + 1
    for parts in ([text[:cut], text[cut:]], [text[: cut - 1], "3", ". c", "\n"]):
        app = Answers()
        async with app.run_test(size=(80, 40)) as pilot:
            markdown = app.query_one(AnswerMarkdown)
            for part in parts:
                await markdown.append(part)
                await pilot.pause()
            assert [type(block) for block in markdown.children] == [StreamedOrderedList]
            rows = drawn(markdown)
        assert rows == await whole(text)
        assert [row[0] for row in rows if row[0].strip()[0].isdigit()] == [" 1. ", " 2. ", " 3. "]
