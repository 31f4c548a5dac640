"""A table in an answer is one widget that draws its lines: columns aligned as the delimiter row says,
cells wrapped to fit, links that work, and a streamed table parsed from its last row on at each
append, ending as the same table shown whole."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.geometry import Offset
from textual.selection import Selection
from textual.widgets import Markdown

from harnez.tui.widgets.markdown import AnswerMarkdown
from harnez.tui.widgets.tables import StreamedTable, column_widths


class Answers(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.clicked: list[str] = []

    def compose(self) -> ComposeResult:
        yield AnswerMarkdown()

    def on_markdown_link_clicked(self, message: Markdown.LinkClicked) -> None:
        self.clicked.append(message.href)


def screen_lines(app: App[Any]) -> list[str]:
    return [
        "".join(segment.text for segment in strip).rstrip()
        for strip in app.screen._compositor.render_strips()
    ]


def table_lines(app: App[Any]) -> list[str]:
    return [line.strip() for line in screen_lines(app) if line.strip()[:1] in set("┌│├└")]


def table_text(rows: int) -> str:
    head = "| name | count | note |\n|:--|:-:|--:|\n"
    return head + "".join(f"| row {n} | {n * 7} | a note about row {n} |\n" for n in range(rows))


async def test_a_table_is_drawn_with_keylines_and_its_columns_aligned_as_its_delimiter_row_says() -> None:
    app = Answers()
    async with app.run_test(size=(80, 20)) as pilot:
        await app.query_one(AnswerMarkdown).append("Before.\n\n" + table_text(2) + "\nAfter.\n")
        await pilot.pause()
        assert table_lines(app) == [
            "┌───────┬───────┬────────────────────┐",
            "│ name  │ count │               note │",
            "├───────┼───────┼────────────────────┤",
            "│ row 0 │   0   │ a note about row 0 │",
            "├───────┼───────┼────────────────────┤",
            "│ row 1 │   7   │ a note about row 1 │",
            "└───────┴───────┴────────────────────┘",
        ]
        # One widget draws it (Textual's table was a widget per cell, laid out in a grid).
        assert len(app.query_one(StreamedTable).query("*")) == 0
        shown = screen_lines(app)
        assert shown.index("  After.") == shown.index("  └───────┴───────┴────────────────────┘") + 2


async def test_a_table_wider_than_the_view_wraps_its_cells_and_keeps_its_columns_in_line() -> None:
    app = Answers()
    text = (
        "| term | meaning |\n|---|---|\n"
        "| idempotent | an operation that can be applied several times without changing the result "
        "beyond the first application |\n| x | y |\n"
    )
    async with app.run_test(size=(40, 20)) as pilot:
        await app.query_one(AnswerMarkdown).append(text)
        await pilot.pause()
        lines = table_lines(app)
        assert len(lines) > 7 and all(len(line) <= 36 for line in lines)
        bars = {tuple(at for at, char in enumerate(line) if char in "│┼┬┴┌┐└┘├┤") for line in lines}
        assert len(bars) == 1  # every line's keylines in the same columns
        cells = " ".join(line.split("│")[2].strip() for line in lines if line.startswith("│"))
        assert "an operation that can be applied several times without changing the result" in cells
        assert "│ idempotent │" in lines[3]  # its longest word is not folded


def test_columns_get_their_text_width_when_it_fits_and_at_least_their_longest_word_when_not() -> None:
    assert column_widths([7, 9, 30], [7, 6, 9], 60) == [7, 9, 30]
    assert column_widths([7, 9, 30], [7, 6, 9], 30) == [7, 7, 16]  # 8 cells shared as 0:3:21
    assert sum(column_widths([12, 40], [12, 8], 30)) == 30
    assert column_widths([12, 40], [12, 30], 20) == [7, 13]  # the words do not fit: cut in proportion
    assert column_widths([50, 50], [50, 50], 4) == [3, 3]  # never under one cell of text


async def test_a_streamed_table_is_parsed_from_its_last_row_on_and_ends_as_the_table_shown_whole(
    markdown_parses: list[str],
) -> None:
    text = "Before.\n\n" + table_text(30) + "\nAfter.\n"
    app = Answers()
    async with app.run_test(size=(80, 90)) as pilot:
        markdown = app.query_one(AnswerMarkdown)
        for at in range(0, len(text), 23):
            await markdown.append(text[at : at + 23])
            await pilot.pause()
        await pilot.pause()
        streamed = screen_lines(app)
        table = app.query_one(StreamedTable)
        assert [row[0].plain for row in table.rows] == [f"row {n}" for n in range(30)]
    # Textual parsed the whole table again at every append: 30 rows at the end.
    rows_parsed = [source.count("| row ") for source in markdown_parses]
    assert max(rows_parsed[len(rows_parsed) // 2 :]) <= 2, rows_parsed

    app = Answers()
    async with app.run_test(size=(80, 90)) as pilot:
        await app.query_one(AnswerMarkdown).append(text)
        await pilot.pause()
        assert screen_lines(app) == streamed


async def test_a_paragraph_that_gets_a_delimiter_row_becomes_a_table_and_a_cell_s_link_works() -> None:
    app = Answers()
    async with app.run_test(size=(60, 20)) as pilot:
        markdown = app.query_one(AnswerMarkdown)
        for part in (
            "| site | about |\n",
            "|---|---",
            "|\n| [docs](https://example.org/docs) |",
            " the manual |\n",
        ):
            await markdown.append(part)
            await pilot.pause()
        assert table_lines(app)[1] == "│ site │ about      │"
        table = app.query_one(StreamedTable)
        await pilot.click(table, offset=(3, 3))
        await pilot.pause()
        assert app.clicked == ["https://example.org/docs"]


async def test_text_selected_in_a_table_is_its_lines_text() -> None:
    app = Answers()
    async with app.run_test(size=(80, 20)) as pilot:
        await app.query_one(AnswerMarkdown).append(table_text(2))
        await pilot.pause()
        table = app.query_one(StreamedTable)
        app.screen.selections = {table: Selection.from_offsets(Offset(0, 3), Offset(20, 4))}
        await pilot.pause()
        assert (
            app.screen.get_selected_text() == "│ row 0 │   0   │ a note about row 0 │\n├───────┼───────┼───"
        )


async def test_a_cell_s_bold_and_code_are_styled_as_in_a_paragraph() -> None:
    app = Answers()
    async with app.run_test(size=(80, 20)) as pilot:
        await app.query_one(AnswerMarkdown).append(
            "| a | b |\n|---|---|\n| **strong** | `code` |\n\n**strong** `code`\n"
        )
        await pilot.pause()
        styles: dict[str, list[Any]] = {"strong": [], "code": []}
        for strip in app.screen._compositor.render_strips():
            for segment in strip:
                if segment.text.strip() in styles:
                    style = segment.style
                    styles[segment.text.strip()].append(style and (style.bold, style.color, style.bgcolor))
        (in_cell, in_paragraph), (code_in_cell, code_in_paragraph) = styles["strong"], styles["code"]
        assert in_cell[0] and in_cell == in_paragraph  # bold, same colours
        assert code_in_cell[2] != in_cell[2] and code_in_cell == code_in_paragraph  # code's background
