"""An answer's Markdown: one shared parser, paragraphs that avoid needless layouts, appends on the loop.

Imported when the first answer is shown (`AssistantBlock.compose`), so that Textual's Markdown and
markdown-it stay off the path to the first frame.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import cast

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Label, Markdown
from textual.widgets._markdown import MarkdownBullet, MarkdownListItem  # not exported by name
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from harnez.tui.widgets.sizing import SizedByLayout
from harnez.tui.widgets.tables import StreamedTable, shift_maps

_PARSERS = threading.local()


def markdown_parser() -> MarkdownIt:
    """The gfm-like Markdown parser of this thread, built once.

    Textual's `Markdown` builds a new parser for every `update` and `append` unless given a factory
    (about 1 ms each, most of an append's cost). One per thread: `update` parses in a worker thread,
    and the parser's linkify step keeps state between calls.
    """
    parser: MarkdownIt | None = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = MarkdownIt("gfm-like")
    return parser


WARM_UP_TEXT = (
    "# A title\n\nSome **bold**, `code` and a [link](https://example.org).\n\n- an item\n\n> a quote\n"
)
"""Markdown that takes the parser through the rules an answer commonly uses."""


def warm_up() -> None:
    """Build a parser and parse a little Markdown in the calling thread (a worker, while nobody
    waits): markdown-it loads its rules on the first parse, which the first answer paid on the loop.
    """
    markdown_parser().parse(WARM_UP_TEXT)


def block_start(tokens: list[Token], at: int) -> int:
    """The first index at or after `at` where a top-level block begins (or the end)."""
    return next(
        (i for i in range(at, len(tokens)) if tokens[i].level == 0 and tokens[i].nesting >= 0), len(tokens)
    )


def tail_start(tokens: list[Token], lines: list[str], rows: int, width: int) -> int:
    """Where (an index into `tokens`) the last top-level blocks begin that fill about `rows` rows:
    their source lines wrapped at `width` and a margin line each, a guess (0: all of them)."""
    filled = 0
    for at in range(len(tokens) - 1, 0, -1):
        token = tokens[at]
        if token.level == 0 and token.nesting >= 0 and token.map is not None:
            start, end = token.map
            filled += 1 + sum(max(1, -(-len(line) // width)) for line in lines[start:end])
            if filled >= rows:
                return at
    return 0


_Paragraph: type[MarkdownBlock] = Markdown.BLOCKS["paragraph_open"]
"""Textual's paragraph block (not exported by name)."""


class StreamedParagraph(SizedByLayout, _Paragraph):  # type: ignore[valid-type,misc]
    """A Markdown paragraph that asks for a layout only when its height changes.

    Textual's paragraph asks for one on every update. While an answer streams, most appends only
    lengthen its last line, and laying out the whole transcript again was most of a frame's cost.
    """

    resumed: MarkdownBlock | None = None
    """The list this paragraph closed, once its first line turned into the list's next item: the
    append's parse began at the list (`AnswerMarkdown.parse`), and the list takes its update."""

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        if self.resumed is None:
            await super()._update_from_block(block)
            return
        await self.remove()
        await self.resumed._update_from_block(block)

    def set_content(self, content: Content) -> None:
        height = self.content_size.height
        self._content = content
        self.update(content, layout=False)
        width = self.content_size.width
        if not width or self.get_content_height(self.size, self.size, width) != height:
            self.refresh(layout=True)


CHUNK_LINES = 16
"""Lines of a streamed code fence drawn by one widget (`StreamedFence`)."""


class StreamedFence(MarkdownFence):
    """A code fence whose code arrives by appends, drawn in chunks of `CHUNK_LINES` lines.

    Textual's fence highlights and draws all of its code again at every append, and its parser
    builds a new fence (highlighting it all too) to copy from: a 300-line fence streamed at 50 lines
    a second took 42 s to show, 28 s of CPU. Here a chunk is highlighted and drawn once, when the
    lines after it begin; only the last chunk is highlighted and drawn again as lines come. A chunk
    highlighted alone may colour a construct that spans chunks (a docstring) differently, so the
    fence is highlighted whole once its code is complete (`settle`): when a block follows it or the
    answer ends; a fence mounted with its code is highlighted whole at once.
    """

    DEFAULT_CSS = """
    StreamedFence { overflow-x: hidden; }
    StreamedFence > Label { width: 1fr; padding: 0 2; }
    StreamedFence > Label.-first { padding: 1 2 0 2; }
    StreamedFence > Label.-last { padding: 0 2 1 2; }
    StreamedFence > Label.-first.-last { padding: 1 2; }
    StreamedFence:ansi > Label { padding: 0 0; }
    StreamedFence:ansi > Label.-first { padding: 1 0 0 0; }
    StreamedFence:ansi > Label.-last { padding: 0 0 1 0; }
    StreamedFence:ansi > Label.-first.-last { padding: 1 0; }
    """
    """Textual's fence pads its one label by a line above and below: here the first chunk's top and
    the last chunk's bottom. (A `padding-top` rule would set the other sides to 0.)"""

    def __init__(self, markdown: Markdown, token: Token, code: str) -> None:
        MarkdownBlock.__init__(self, markdown, token)  # not the fence's: it highlights the code at once
        self.code = code
        self.lexer = token.info
        self.auto_links = False
        self._highlighted_code = Content("")  # highlighted when drawn
        self._chunks: list[Label] = []
        self._settled = 0
        """Chunks drawn for good while the code streams (each `CHUNK_LINES` lines)."""
        self._settled_code = ""
        """Their code, each line ended by a newline."""
        self.whole = False
        """Whether the code shown was highlighted whole (not chunk by chunk)."""

    def _highlighted(self, code: str) -> Content:
        return self.highlight(
            code, self.lexer, ansi=self.app.native_ansi_color, dark=self.app.current_theme.dark
        )

    def compose(self) -> ComposeResult:
        self.whole = True
        self._highlighted_code = self._highlighted(self.code)
        self._chunks = [Label(line, expand=True) for line in self._split(self._highlighted_code, self.code)]
        self._mark_ends()
        yield from self._chunks

    @staticmethod
    def _split(content: Content, code: str) -> list[Content]:
        """`content` (the highlighted `code`) in chunks of `CHUNK_LINES` lines."""
        count = code.count("\n") + 1
        lines = content.split("\n", allow_blank=True)[:count]
        lines += [Content("")] * (count - len(lines))
        return [Content("\n").join(lines[at : at + CHUNK_LINES]) for at in range(0, count, CHUNK_LINES)]

    def _mark_ends(self) -> None:
        for index, chunk in enumerate(self._chunks):
            chunk.set_class(index == 0, "-first")
            chunk.set_class(index == len(self._chunks) - 1, "-last")

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        if not isinstance(block, MarkdownFence):
            await super()._update_from_block(block)
            return
        self._copy_context(block)
        if not self._chunks:  # not composed yet: it will draw the code it has then
            return
        if self.whole or not self.code.startswith(self._settled_code):
            self._settled, self._settled_code = 0, ""  # not an append: draw it all again, by chunks
        self.whole = False
        markdown = self._markdown
        if isinstance(markdown, AnswerMarkdown):
            markdown.open_fences.add(self)
        lines = self.code.split("\n")
        full = (len(lines) - 1) // CHUNK_LINES  # the chunks with lines after them: drawn for good
        added: list[Label] = []
        for index in range(self._settled, full + 1):
            content = self._highlighted("\n".join(lines[index * CHUNK_LINES : (index + 1) * CHUNK_LINES]))
            if index < len(self._chunks):
                self._chunks[index].update(content)
            else:
                added.append(Label(content, expand=True))
        self._settled = full
        self._settled_code = "\n".join(lines[: full * CHUNK_LINES]) + "\n" if full else ""
        extra, self._chunks = self._chunks[full + 1 :], self._chunks[: full + 1] + added
        if extra:
            await self.remove_children(extra)
        self._mark_ends()
        if added:
            await self.mount_all(added)

    async def settle(self) -> None:
        """Highlight the code whole (it is complete) and draw it again in the same chunks."""
        if self.whole or not self.is_attached:
            return
        self.whole = True
        self._highlighted_code = self._highlighted(self.code)
        parts = self._split(self._highlighted_code, self.code)
        for chunk, content in zip(self._chunks, parts, strict=False):
            chunk.update(content)
        added = [Label(content, expand=True) for content in parts[len(self._chunks) :]]
        extra, self._chunks = self._chunks[len(parts) :], self._chunks[: len(parts)] + added
        self._mark_ends()
        if extra:
            await self.remove_children(extra)
        if added:
            await self.mount_all(added)

    def notify_style_update(self) -> None:
        if self._chunks and self.is_attached:  # a new theme: its colours
            self.whole = False
            self.call_later(self.settle)
        MarkdownBlock.notify_style_update(self)


FOLD_AT_ONCE = 8
"""Children folded together at least (`Folds.fold`)."""


class FoldedSpace(Widget):
    """The place of a container's first children while they are folded: empty, as tall as they were."""

    DEFAULT_CSS = "FoldedSpace { height: 0; }"


class Folds:
    """The first children of a vertical container, folded: hidden (`display: none`, still mounted),
    with one `FoldedSpace` as tall as they were in their place, so nothing after them moves.
    Textual lays out every displayed widget in every layout, on screen or not."""

    def __init__(self, container: Widget) -> None:
        self.container = container
        self.hidden: list[Widget] = []
        self.space: FoldedSpace | None = None

    async def fold(self, children: list[Widget], bottom: int) -> int:
        """Fold the first of `children` (the container's, in order, without the space) that end, with
        their margin, at or above the screen's row `bottom`, never the last; returns how many were
        folded now. The heights are those of the last layout: `unfold` before the width changes."""
        start = count = len(self.hidden)
        for child in children[start:-1]:
            if not child.region or child.region.bottom + child.styles.margin.bottom > bottom:
                break
            count += 1
        if count - start < FOLD_AT_ONCE:
            return 0  # each fold is a layout: not one for every line that came
        kept = children[count]  # after the space: its own top margin only (margins collapse)
        height = kept.region.y - kept.styles.margin.top - self.container.content_region.y
        if height <= 0 or not kept.region:
            return 0  # not laid out yet
        with self.container.app.batch_update():
            for child in children[start:count]:
                child.display = False
            self.hidden.extend(children[start:count])
            if self.space is None:
                self.space = FoldedSpace()
                await self.container.mount(self.space, before=0)
            self.space.styles.height = height
        return count - start

    def unfold(self) -> bool:
        """Show the folded children again; whether any were folded."""
        if self.space is None:
            return False
        with self.container.app.batch_update():
            for child in self.hidden:
                child.display = True
            self.hidden.clear()
            self.space.display = False
            self.space.remove()
            self.space = None
        return True

    def shown(self, children: int) -> int:
        """How many of the container's `children` (the space included) are displayed."""
        return children - len(self.hidden) - (self.space is not None)


class BulletRow(StreamedParagraph):
    """A list's row whose item is one paragraph (most are), drawn by one widget: its symbol, then
    the text wrapped beside it.

    Textual's row is four widgets (a row, the symbol, a column, the paragraph), and every layout
    walks each of them: a list of a hundred items cost a frame four hundred widgets.
    """

    DEFAULT_CSS = """
    BulletRow > .list--symbol { color: $text-primary; }
    BulletRow:light > .list--symbol { color: $text-secondary; }
    """
    COMPONENT_CLASSES = {*_Paragraph.COMPONENT_CLASSES, "list--symbol"}

    def __init__(self, markdown: Markdown, token: Token, symbol: str, content: Content) -> None:
        super().__init__(markdown, token)
        self.symbol = symbol
        self._drawn: tuple[int, Content, Content] | None = None
        """The last width drawn at, the text drawn and what it drew."""
        self.set_content(content)

    def _draw(self, width: int) -> Content:
        """The symbol, then the text wrapped to what is left of `width`, its lines indented by as much."""
        if self._drawn is not None and self._drawn[0] == width and self._drawn[1] is self._content:
            return self._drawn[2]
        indent = cell_len(self.symbol)
        lines = self._content.wrap(max(1, width - indent), overflow="fold") or [Content("")]
        symbol = Content.styled(self.symbol, ".list--symbol")
        drawn = Content("\n").join([symbol + lines[0], *(line.pad_left(indent) for line in lines[1:])])
        self._drawn = (width, self._content, drawn)
        return drawn

    def set_symbol(self, symbol: str) -> None:
        self.symbol, self._drawn = symbol, None
        self.refresh(layout=True)

    def render(self) -> Content:
        return self._draw(self.content_size.width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._draw(width).plain.count("\n") + 1


_BulletList: type[MarkdownBlock] = Markdown.BLOCKS["bullet_list_open"]
_OrderedList: type[MarkdownBlock] = Markdown.BLOCKS["ordered_list_open"]


class _StreamedList:
    """A mixin, first among a Markdown list's bases: an append builds only the list's last item
    again and its new ones.

    Textual parses the list again at every append that changes it and replaces it with the new one,
    every item built and mounted again (four widgets an item): a list of 150 items streamed at 20 a
    second took 41 s to show, 39 s of CPU. An item followed by another one is complete (a tight and
    a loose list look the same), so its row stays: `AnswerMarkdown._parse_markdown` leaves out the
    tokens of the rows kept (`items_to_skip`), and the new block holds the rest. Better, the source
    is parsed without the lines of the complete items (`without_complete_items`, from
    `AnswerMarkdown.parse`): markdown-it's parse of the whole list grew with every item. When the
    markers widen (item 10 of a numbered list pads items 1-9) the rows kept are renumbered. The
    whole list is built again when the block is no longer the same list.
    """

    _row_folds: Folds | None = None
    _item_starts: list[int] | None = None
    """The first line of each of its items, counted from the list's first line."""
    _head: str | None = None
    """The list's first line (its source), once complete."""

    def _rows(self) -> list[Widget]:
        this: MarkdownBlock = self  # type: ignore[assignment]  # a mixin of Markdown lists
        return [row for row in this.children if not isinstance(row, FoldedSpace)]

    @property
    def shown_rows(self) -> int:
        """How many of its rows are displayed (read at every streamed event: no walk of the rows)."""
        this: MarkdownBlock = self  # type: ignore[assignment]
        rows = len(this.children)  # with the folded space, which `Folds.shown` counts out
        return rows if self._row_folds is None else self._row_folds.shown(rows)

    async def fold_rows(self, bottom: int) -> int:
        """Fold its first rows that end at or above the screen's row `bottom` (`Folds`)."""
        if self._row_folds is None:
            self._row_folds = Folds(self)  # type: ignore[arg-type]
        return await self._row_folds.fold(self._rows(), bottom)

    def unfold_rows(self) -> bool:
        return self._row_folds is not None and self._row_folds.unfold()

    def items_to_skip(self, tokens: list[Token]) -> int:
        """How many first items of the list the `tokens` begin with keep their rows (0: build it all)."""
        this: MarkdownBlock = self  # type: ignore[assignment]  # a mixin of Markdown lists
        rows = len(self._rows())
        if (
            rows < 2
            or not tokens
            or (tokens[0].type, tokens[0].markup) != (this._token.type, this._token.markup)
        ):
            return 0
        items = 0
        for token in tokens[1:]:
            if token.level == 0:
                break  # the list's end
            items += token.type == "list_item_open" and token.level == 1
        return rows - 1 if items >= rows else 0

    def without_complete_items(self, source: str) -> tuple[str, int, int]:
        """An append's `source` (from the list's first line on) without the lines of the items whose
        rows are complete (all but the last, which may have grown): the source left, how many items
        and lines were left out; `source`, 0, 0 if it does not begin with this list."""
        this: MarkdownBlock = self  # type: ignore[assignment]
        complete = len(self._rows()) - 1
        starts = self._item_starts
        if complete < 1 or starts is None or len(starts) <= complete:
            return source, 0, 0
        if self._head is None:
            head = this._markdown.source.splitlines(keepends=True)[this.source_range[0] :][:1]
            if not head or not head[0].endswith("\n"):
                return source, 0, 0
            self._head = head[0]
        lines = source.splitlines(keepends=True)
        start = starts[complete]
        if not source.startswith(self._head) or not 0 < start < len(lines):
            return source, 0, 0
        return "".join(lines[start:]), complete, start

    def _note_items(self, block: MarkdownBlock, kept: int) -> None:
        """Keep where the items of `block` (parsed, after the first `kept`) begin."""
        first = block._token.map[0] if block._token.map else 0
        items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
        starts = [item._token.map[0] - first for item in items if item._token.map]
        self._item_starts = [*(self._item_starts or [])[:kept], *starts]

    def _renumber(self, rows: list[Widget], items: int) -> None:
        """Give the `rows` kept the markers of a list of `items` items (numbered lists)."""

    def _width(self, items: int) -> int:
        """The width of the markers of a list of `items` items (the same for bullets)."""
        return 0

    def _symbol(self, index: int, item: MarkdownListItem, items: int) -> str:
        return item.bullet

    def _row(self, symbol: str, item: MarkdownListItem) -> Widget:
        """The row of an `item`: one widget for a paragraph, else Textual's row of widgets."""
        this: MarkdownBlock = self  # type: ignore[assignment]
        blocks = item._blocks
        if len(blocks) == 1 and isinstance(blocks[0], _Paragraph) and not isinstance(blocks[0], BulletRow):
            return BulletRow(this._markdown, blocks[0]._token, symbol, blocks[0]._content)
        bullet = MarkdownBullet()
        bullet.symbol = symbol
        return Horizontal(bullet, Vertical(*blocks))

    def compose(self) -> ComposeResult:
        this: MarkdownBlock = self  # type: ignore[assignment]
        items = [block for block in this._blocks if isinstance(block, MarkdownListItem)]
        self._note_items(this, 0)
        for index, item in enumerate(items):
            yield self._row(self._symbol(index, item, len(items)), item)
        this._blocks.clear()

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        this: MarkdownBlock = self  # type: ignore[assignment]
        rows = self._rows()
        skipped: int = getattr(block, "skipped_items", 0)
        items = [b for b in block._blocks if isinstance(b, MarkdownListItem)]
        if not skipped or type(block) is not type(this) or skipped != len(rows) - 1:
            await super()._update_from_block(block)  # type: ignore[misc]
            return
        # Its own token stays: a list parsed from its last item on numbers from that item.
        this.source_range = block.source_range
        self._note_items(block, skipped)
        if self._width(skipped + len(items)) != self._width(len(rows)):
            self._renumber(rows, skipped + len(items))
        kept = await self._update_row(rows[-1], items[0]) if items else False
        added = []
        for index, item in enumerate(items[kept:], skipped + kept):
            added.append(self._row(self._symbol(index, item, skipped + len(items)), item))
        with this.app.batch_update():
            if not kept:
                await rows[-1].remove()
            if added:
                await this.mount_all(added)

    @staticmethod
    async def _update_row(row: Widget, item: MarkdownListItem) -> bool:
        """Update the last row in place when its item is still paragraphs only, as many as before
        (most appends only lengthen the last item's text); whether it was."""
        new = item._blocks
        if isinstance(row, BulletRow):
            if len(new) != 1 or not isinstance(new[0], _Paragraph):
                return False
            row.set_content(new[0]._content)
            return True
        body = row.children[-1] if row.children else None
        old = list(body.children) if isinstance(body, Vertical) else []
        if not old or len(old) != len(new) or not all(isinstance(b, _Paragraph) for b in [*old, *new]):
            return False
        for shown, parsed in zip(old, new, strict=True):
            await shown._update_from_block(parsed)  # type: ignore[attr-defined]
        return True


def without_items(tokens: list[Token], skip: int) -> list[Token]:
    """The tokens of a list without those of its first `skip` items."""
    opens = [at for at, token in enumerate(tokens) if token.type == "list_item_open" and token.level == 1]
    return tokens[:1] + tokens[opens[skip] :]


class StreamedBulletList(_StreamedList, _BulletList):  # type: ignore[valid-type,misc]
    """A bullet list that an append extends (`_StreamedList`)."""


class StreamedOrderedList(_StreamedList, _OrderedList):  # type: ignore[valid-type,misc]
    """A numbered list that an append extends (`_StreamedList`), numbered as Textual's: on from its
    first number, right-aligned to the widest."""

    def _start(self) -> int:
        start = self._token.attrs.get("start", 1)
        return start if isinstance(start, int) else 1

    def _width(self, items: int) -> int:
        return len(f"{self._start() + items - 1}. ") + 1

    def _symbol(self, index: int, item: MarkdownListItem | None, items: int) -> str:
        return f"{self._start() + index}. ".rjust(self._width(items))

    def _renumber(self, rows: list[Widget], items: int) -> None:
        for index, row in enumerate(rows):
            symbol = self._symbol(index, None, items)
            if isinstance(row, BulletRow):
                row.set_symbol(symbol)
            elif row.children and isinstance(bullet := row.children[0], MarkdownBullet):
                bullet.symbol = symbol
                bullet.refresh(layout=True)


ITEM_START = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)", re.MULTILINE)
"""A line that begins a list item (`match`: the first line)."""


class AnswerMarkdown(SizedByLayout, Markdown):
    """The Markdown of an answer: built by appends on the event loop; paragraphs are `StreamedParagraph`s.

    A long answer's first blocks can be folded (`fold_above`): hidden, with one empty widget of
    their height in their place, so that the layouts of the frames that show the answer's end do
    not walk them. Textual lays out every displayed widget in every layout, on screen or not, and an
    answer of thousands of words is hundreds of blocks: its frames grew from ~30 ms to ~100-300 ms
    as it streamed, and keys waited behind them.
    """

    BLOCKS: dict[str, type[MarkdownBlock]] = {
        **Markdown.BLOCKS,
        "paragraph_open": StreamedParagraph,
        "fence": StreamedFence,
        "code_block": StreamedFence,
        "bullet_list_open": StreamedBulletList,
        "ordered_list_open": StreamedOrderedList,
        "table_open": StreamedTable,
    }

    def __init__(self, text: str = "", tail: tuple[int, int] | None = None) -> None:
        # `parse` is the shared parser's, with a table's complete rows left out.
        super().__init__(parser_factory=lambda: cast(MarkdownIt, self))
        self._left_out = 0
        """The complete rows of the last table, or items of the last list, the last `parse` left out."""
        self._text_at_mount = text
        self._tail = tail
        """(rows, width): of `text`, mount only the last blocks that fill about `rows` rows at `width`;
        those above (the head) are built and mounted by `mount_head`."""
        self._head: list[Token] | None = None
        self.tail_top: Widget | None = None
        """The first block of the tail mounted first: the head's blocks go above it."""
        self._open_at_mount = False
        self._parsed_after: Widget | None = None
        """The block the last append's parse began at (the last one, or a list it resumed)."""
        self._folds = Folds(self)
        self._appending = False
        self._folded_lists: list[_StreamedList] = []
        """Lists whose first rows were folded while each was the last block."""
        self.open_fences: set[StreamedFence] = set()
        """Fences drawn chunk by chunk while their code streamed, not yet highlighted whole."""

    def parse(self, source: str) -> list[Token]:
        """Parse an append's (or the document's) `source`, as this thread's parser does. Textual parses
        an append from the last block's first line on: when that block is a table, the lines of its
        complete rows are left out (the parse and the blocks built of it grew with every row) and
        `_parse_markdown` marks the table parsed without them."""
        parser = markdown_parser()
        last = self._last_block()
        if self._appending and (resumed := self._resumed_list(last, source)) is not None:
            last, source = resumed, self._from_line(self._last_parsed_line)
        self._parsed_after = last
        if self._appending and isinstance(last, StreamedTable):
            cut, rows = last.without_complete_rows(source)
            if rows and (tokens := parser.parse(cut)) and tokens[0].type == "table_open":
                shift_maps(tokens, rows)
                self._left_out = rows
                return tokens
        elif self._appending and isinstance(last, _StreamedList):
            cut, items, lines = last.without_complete_items(source)
            opened: Token = last._token
            tokens = parser.parse(cut) if items else []
            if tokens and (tokens[0].type, tokens[0].markup) == (opened.type, opened.markup):
                for token in tokens:  # lines numbered as if the items left out were there
                    if token.map:
                        start, end = token.map
                        token.map = [start if token is tokens[0] else start + lines, end + lines]
                self._left_out = items
                return tokens
        return parser.parse(source)

    def _resumed_list(self, last: Widget | None, source: str) -> MarkdownBlock | None:
        """The list that the paragraph `last` closed (the block before it, blank lines between at
        most) when the paragraph's `source` now begins with an item of that list: a marker that
        came in two appends (`3`, then `. c`) after an item that ends in a table or a fence, where no
        paragraph continues. The whole text shown at once is one list: the append is then parsed
        from the list's first line, and the paragraph gives way to the list's update."""
        if type(last) is not StreamedParagraph or len(self.children) < 2:
            return None
        closed = self.children[-2]
        if not isinstance(closed, _StreamedList) or not closed.display or not ITEM_START.match(source):
            return None  # (a folded list stays as it is)
        block = cast(MarkdownBlock, closed)
        tokens = markdown_parser().parse(source)
        if not tokens or (tokens[0].type, tokens[0].markup) != (block._token.type, block._token.markup):
            return None
        last.resumed = block
        self._last_parsed_line = block.source_range[0]  # Textual numbers the blocks' lines from it
        return block

    def _from_line(self, line: int) -> str:
        """The document's source from its line `line` on."""
        return "".join(self.source.splitlines(keepends=True)[line:])

    def append(self, markdown: str) -> AwaitComplete:
        self._appending = True  # its parse (later, under the document's lock) may extend a list
        return super().append(markdown)

    def _parse_markdown(self, tokens: Iterable[Token]) -> Iterable[MarkdownBlock]:
        # An append that extends the list or the table this ends with was parsed without their
        # complete items or rows (`parse`), or the tokens of the list's complete items are left out.
        tokens = list(tokens)
        appending, self._appending = self._appending, False
        left_out, self._left_out = self._left_out, 0
        last, self._parsed_after = (self._parsed_after if appending else self._last_block()), None
        items = 0
        if isinstance(last, _StreamedList):
            items = left_out or (last.items_to_skip(tokens) if appending else 0)
            if items and not left_out:
                tokens = without_items(tokens, items)
        for index, block in enumerate(super()._parse_markdown(tokens)):
            if index == 0 and items:
                block.skipped_items = items  # type: ignore[attr-defined]  # see _StreamedList
            elif index == 0 and isinstance(block, StreamedTable):
                block.skipped_rows = left_out
            yield block

    async def settle_fences(self, every: bool = False) -> None:
        """Highlight whole the streamed fences that a block now follows (their code is complete), or
        `every` one (the answer is complete)."""
        if not self.open_fences:
            return
        last = self.children[-1] if self.children else None
        for fence in [f for f in self.open_fences if every or f is not last]:
            self.open_fences.discard(fence)
            await fence.settle()

    @property
    def shown_blocks(self) -> int:
        """How many of its blocks are displayed (not folded), and of its last list's rows."""
        rows = last.shown_rows if isinstance(last := self._last_block(), _StreamedList) else 0
        return self._folds.shown(len(self.children)) + rows

    def _last_block(self) -> Widget | None:
        return self.children[-1] if self.children and self.children[-1] is not self._folds.space else None

    async def fold_above(self, bottom: int) -> int:
        """Fold the first blocks that end, with their margin, at or above the screen's row `bottom`
        (never the last block, which appends update; the first rows of a list that is the last
        block); their place stays, so nothing below them moves. Returns how many were folded now.
        The heights are those of the last layout: `unfold` before the width changes."""
        blocks: list[Widget] = [child for child in self.children if isinstance(child, MarkdownBlock)]
        if self._head is not None and self.tail_top in blocks:  # the head's next blocks go above it
            blocks = blocks[: blocks.index(self.tail_top) + 1]
        folded = await self._folds.fold(blocks, bottom)
        last = self._last_block()
        if isinstance(last, _StreamedList) and (rows := await last.fold_rows(bottom)):
            folded += rows
            if last not in self._folded_lists:
                self._folded_lists.append(last)
        return folded

    def unfold(self) -> bool:
        """Show the folded blocks and rows again (the person scrolls up to them, or the width changes)."""
        lists, self._folded_lists = self._folded_lists, []
        rows = [folded.unfold_rows() for folded in lists]
        return self._folds.unfold() or any(rows)

    async def open_paragraph(self) -> None:
        """Mount an empty first paragraph into an empty document, for the first words to fill in.

        Textual's `append` updates a last paragraph in place (a `set_content`) where it would mount
        a new one: for a spare answer block, that mount (several turns of the loop) then happens
        before its first words come, not between them and the frame that shows them.
        """
        if not self.is_attached:  # its block was mounted, its own mount not yet done: on mount
            self._open_at_mount = True
        elif not self.children and not self.source:
            await self.mount(StreamedParagraph(self, Token("paragraph_open", "p", 1, map=[0, 1])))

    async def on_mount(self, event: events.Mount) -> None:
        # Textual's own handler parses the document, even an empty one, in a worker thread: a
        # transcript mounting ten answers waited ~50 ms for the thread pool. An append parses here.
        event.prevent_default()
        if self._text_at_mount and self._tail:
            await self._mount_tail(self._text_at_mount, *self._tail)
        elif self._text_at_mount:
            await self.append(self._text_at_mount)
        elif self._open_at_mount:
            await self.open_paragraph()

    async def _mount_tail(self, text: str, rows: int, width: int) -> None:
        """Parse `text` whole, build and mount the blocks of its tail (`tail_start`); those above it
        are built as `mount_head` asks for them."""
        tokens = markdown_parser().parse(text)
        at = tail_start(tokens, text.splitlines(), rows, max(width, 1))
        self._markdown = text  # its `source`, as an append of it would set
        self._last_parsed_line = next((t.map[0] for t in reversed(tokens) if t.map and not t.level), 0)
        tail = list(self._parse_markdown(tokens[at:]))
        if at and tail:
            self._head, self.tail_top = tokens[:at], tail[0]
        await self.mount_all(tail)

    @property
    def head_pending(self) -> bool:
        """Whether blocks above the tail mounted first are still to be mounted (`mount_head`)."""
        return self._head is not None

    async def mount_head(self, tokens: int | None = None) -> None:
        """Build and mount the next whole blocks above the tail, in order, displayed: those of about
        `tokens` of the parser's tokens (a block's widgets grow with them), or all (None)."""
        if self._head is None:
            return
        cut = len(self._head) if tokens is None else block_start(self._head, max(tokens, 1))
        head, self._head = self._head[:cut], self._head[cut:] or None
        await self.mount_all(list(self._parse_markdown(head)), before=self.tail_top)
