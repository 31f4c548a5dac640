"""An answer's Markdown table: one widget that draws its lines, rows that an append leaves alone.

Textual's table is a grid of one widget per cell: every layout measures every cell, every frame
draws the keylines around all of them, and every append builds the whole table's cells again from
a new parse. A table of 150 rows streamed at 20 rows a second took 24 s to show, all of it CPU.
Here the table is one widget using the line API: its height is its line count, computed when a row
changes; a frame draws only the lines in view, each row's lines kept until the column widths
change; an append parses only the rows after the complete ones (`rows_to_skip`).

It looks like Textual's table (keylines between all cells, headers in the primary colour, a cell
padded by one space each side), but columns take the width their text needs rather than stretching
to the view's, and a column's alignment from the delimiter row (`:-:`, `--:`) is kept.
"""

from __future__ import annotations

from bisect import bisect_right

from markdown_it.token import Token
from rich.cells import cell_len
from rich.segment import Segment
from textual.app import ComposeResult
from textual.content import Content
from textual.selection import Selection
from textual.strip import Strip
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

PADDING = 2
"""Cells a column's text is padded by: one space each side."""
NARROWEST = 1 + PADDING
"""The narrowest a column is drawn: one cell of text."""


def share(amount: int, weights: list[int]) -> list[int]:
    """`amount` split in proportion to `weights` (whole numbers that add up to it: the largest
    remainders get the cells left over)."""
    total = sum(weights)
    if amount <= 0 or not total:
        return [0] * len(weights)
    parts = [amount * weight // total for weight in weights]
    left = amount - sum(parts)
    by_remainder = sorted(range(len(weights)), key=lambda i: -(amount * weights[i] % total))
    for index in by_remainder[:left]:
        parts[index] += 1
    return parts


def column_widths(natural: list[int], smallest: list[int], space: int) -> list[int]:
    """The widths (padding included) of columns whose text is `natural` wide unwrapped and whose
    longest word is `smallest` wide, in `space` cells (keylines excluded).

    Every column gets its natural width if they fit; otherwise each gets at least its longest word
    and the rest is shared by what they lack; if the words alone do not fit, the widths are cut in
    proportion (long words fold), never under `NARROWEST`."""
    if sum(natural) <= space:
        return natural
    floor = [min(word, width) for word, width in zip(smallest, natural, strict=True)]
    if sum(floor) <= space:
        lacking = [width - low for width, low in zip(natural, floor, strict=True)]
        return [low + extra for low, extra in zip(floor, share(space - sum(floor), lacking), strict=True)]
    widths = [
        NARROWEST + extra for extra in share(space - NARROWEST * len(floor), [w - NARROWEST for w in floor])
    ]
    return [max(NARROWEST, width) for width in widths]


def _measure(cell: Content) -> tuple[int, int]:
    """A cell's text: its width on one line, and its longest word's, both padded."""
    words = cell.plain.split()
    return cell.cell_length + PADDING, max((cell_len(word) for word in words), default=0) + PADDING


def _align(token: Token) -> str:
    style = token.attrGet("style")
    if isinstance(style, str) and style.startswith("text-align:"):
        return style.removeprefix("text-align:")
    return "left"


_Table: type[MarkdownBlock] = Markdown.BLOCKS["table_open"]
"""Textual's table block (not exported by name): its styles."""


class StreamedTable(_Table):  # type: ignore[valid-type,misc]
    """A Markdown table drawn by one widget, line by line (see the module's notes)."""

    DEFAULT_CSS = """
    StreamedTable { height: auto; }
    StreamedTable > .table--keyline { color: $foreground 20%; }
    StreamedTable > .table--header { color: $primary; text-style: bold; }
    """
    COMPONENT_CLASSES = {"table--keyline", "table--header"}

    def __init__(self, markdown: Markdown, token: Token) -> None:
        super().__init__(markdown, token)
        self.skipped_rows = 0
        """Complete rows left out of this table's parse (`without_complete_rows`): the shown table keeps them."""
        self._head: str | None = None
        """The source lines of its header and delimiter rows, once complete."""
        self.headers: list[Content] = []
        self.rows: list[list[Content]] = []
        self.aligns: list[str] = []
        self._measures: list[list[tuple[int, int]]] = []
        """Per row (the header first), per cell: `_measure`."""
        self._widths: list[int] = []
        self._width = 0
        """The width the columns were fitted to (0: none yet)."""
        self._lines: list[list[list[Content]]] = []
        """Per row (the header first), its lines at `_widths`: each a cell's text per column, padded."""
        self._tops: list[int] = []
        """Per row (the header first), the line it begins at (below its keyline)."""
        self._strips: dict[int, Strip] = {}
        """Lines drawn at the current widths and theme, by line number."""

    # -- the rows --

    def compose(self) -> ComposeResult:
        self._show(*self._parsed(), keep=0)
        self._blocks.clear()  # the cells' blocks: read
        yield from ()

    def _parsed(self) -> tuple[list[Content], list[list[Content]], list[str]]:
        """The header, rows and columns' alignment of this table as parsed."""
        headers: list[Content] = []
        aligns: list[str] = []
        rows: list[list[Content]] = []
        for section in self._blocks:
            for row in section._blocks:
                cells = [cell._content for cell in row._blocks]
                if section._token.type == "thead_open":
                    headers, aligns = cells, [_align(cell._token) for cell in row._blocks]
                else:
                    rows.append(cells)
        return headers, rows, aligns

    def _show(self, headers: list[Content], rows: list[list[Content]], aligns: list[str], keep: int) -> None:
        """Show `headers` and, after the first `keep` rows shown, `rows`."""
        columns = len(headers)
        blank = Content("")
        self.headers = headers
        self.aligns = [*aligns[:columns], *["left"] * (columns - len(aligns))]
        fitted = [[*row[:columns], *[blank] * (columns - len(row))] for row in rows]
        keep = min(keep, len(self.rows))
        changed = self._tops[keep] + len(self._lines[keep]) if 0 < keep < len(self._lines) else 0
        self.rows[keep:] = fitted
        self._measures[keep + 1 if keep else 0 :] = [
            *([] if keep else [[_measure(cell) for cell in self.headers]]),
            *([_measure(cell) for cell in row] for row in fitted),
        ]
        del self._lines[keep + 1 if keep else 0 :]
        for y in [y for y in self._strips if y >= changed]:
            del self._strips[y]
        if self._width:
            self._fit(self._width)

    def without_complete_rows(self, source: str) -> tuple[str, int]:
        """An append's `source` (from this table's first line on) without the lines of the rows shown
        complete (all but the last, which may have grown), and how many rows were left out: `source`
        and 0 if it does not begin with this table's header."""
        complete = len(self.rows) - 1
        if complete < 1:
            return source, 0
        if self._head is None:
            first = self.source_range[0]
            head = "".join(self._markdown.source.splitlines(keepends=True)[first : first + 2])
            if head.count("\n") < 2:
                return source, 0  # its delimiter row may still grow
            self._head = head
        if not source.startswith(self._head):
            return source, 0
        lines = source.splitlines(keepends=True)
        if len(lines) <= 2 + complete:
            return source, 0
        return "".join(lines[:2] + lines[2 + complete :]), complete

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        if not isinstance(block, StreamedTable):
            await MarkdownBlock._update_from_block(self, block)  # no longer a table: replaced
            return
        self._copy_context(block)
        self._show(*block._parsed(), keep=block.skipped_rows)
        self.refresh(layout=True)

    # -- the layout --

    def _fit(self, width: int) -> None:
        """Fit the columns to `width` and lay the rows not laid out yet in lines."""
        columns = len(self.headers)
        cells = list(zip(*self._measures, strict=True)) if columns else []
        natural = [max(cell[0] for cell in column) for column in cells]
        smallest = [max(cell[1] for cell in column) for column in cells]
        widths = column_widths(natural, smallest, width - columns - 1)
        if widths != self._widths or width != self._width:
            self._widths, self._width = widths, width
            self._lines.clear()
            self._strips.clear()
        laid = len(self._lines)
        for row in range(laid, len(self._measures)):
            self._lines.append(self._draw_row(self.headers if row == 0 else self.rows[row - 1]))
        del self._tops[laid:]
        line = self._tops[-1] + len(self._lines[laid - 1]) + 1 if self._tops else 1
        for lines in self._lines[laid:]:
            self._tops.append(line)
            line += len(lines) + 1  # and the keyline below it

    def _draw_row(self, cells: list[Content]) -> list[list[Content]]:
        """A row's lines: each cell wrapped to its column, aligned and padded."""
        wrapped = [
            cell.wrap(width - PADDING, overflow="fold") or [Content("")]
            for cell, width in zip(cells, self._widths, strict=True)
        ]
        drawn: list[list[Content]] = []
        for at in range(max((len(lines) for lines in wrapped), default=1)):
            parts: list[Content] = []
            for lines, width, align in zip(wrapped, self._widths, self.aligns, strict=True):
                text = lines[at] if at < len(lines) else Content("")
                room = max(0, width - PADDING - text.cell_length)
                left = room if align == "right" else room // 2 if align == "center" else 0
                parts.append(text.pad(1 + left, 1 + room - left))
            drawn.append(parts)
        return drawn

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        if width != self._width:
            self._fit(width)
        return self._tops[-1] + len(self._lines[-1]) + 1 if self._lines else 0

    # -- the drawing --

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width  # the width `get_content_height` is given (less any padding)
        if width != self._width:
            self._fit(width)
        selection = self.text_selection
        strip = self._strips.get(y) if selection is None else None
        if strip is None:
            line = self._line(y)
            if selection is not None and (span := selection.get_span(y)) is not None:
                start, end = span
                line = line.stylize(self.screen.get_visual_style("screen--selection"), start, end)
            # Styles named by class (`.strong`, `.code_inline`) are the Markdown's: `_get_style`.
            segments = [
                Segment(text, style.rich_style if style else None)
                for text, style in line.render(self.visual_style, "", self._get_style)
            ]
            strip = Strip(segments, line.cell_length)
            strip = strip.crop_extend(0, width, self.visual_style.rich_style).apply_offsets(0, y)
            if selection is None:
                self._strips[y] = strip
        return strip

    def _line(self, y: int) -> Content:
        """Line `y` of the table, styled."""
        if not self._lines:
            return Content("")
        keyline = self.get_visual_style("table--keyline", partial=True)
        row = bisect_right(self._tops, y) - 1
        at = y - self._tops[row] if row >= 0 else -1
        if row < 0:
            return self._keyline("┌", "┬", "┐").stylize(keyline)
        if at < len(self._lines[row]):
            bar = Content("│").stylize(keyline)
            parts = self._lines[row][at]
            if row == 0:
                header = self.get_visual_style("table--header", partial=True)
                parts = [part.stylize(header) for part in parts]
            return bar + bar.join(parts) + bar
        if row == len(self._lines) - 1:
            return self._keyline("└", "┴", "┘").stylize(keyline)
        return self._keyline("├", "┼", "┤").stylize(keyline)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        height = self._tops[-1] + len(self._lines[-1]) + 1 if self._lines else 0
        return selection.extract("\n".join(self._line(y).plain for y in range(height))), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()

    def _keyline(self, left: str, middle: str, right: str) -> Content:
        return Content(left + middle.join("─" * width for width in self._widths) + right)

    def notify_style_update(self) -> None:
        self._strips.clear()  # a new theme: its colours
        super().notify_style_update()


def shift_maps(tokens: list[Token], rows: int) -> None:
    """Number the lines of `tokens` parsed without the lines of a table's first `rows` body rows
    (`StreamedTable.without_complete_rows`) as if they were there: Textual places the blocks and
    its next parse by them."""
    for token in tokens:
        if token.map:
            start, end = token.map
            token.map = [start + rows if start >= 2 else start, end + rows if end > 2 else end]
