"""How a streaming widget takes the size a layout gives it."""

from __future__ import annotations

from textual.geometry import Size


class SizedByLayout:
    """A mixin, first among a widget's bases: a new size set by a layout asks for no second layout.

    Textual stores a resized widget's virtual size in a reactive that asks for a layout of the screen,
    so every layout that resizes a widget is followed by another one that changes nothing. While an
    answer streams, its paragraph, Markdown and block and the transcript grow with every wrapped line,
    and those second layouts were half of the frames that lay the transcript out (10-70 ms each under
    load, keys waiting behind them). Textual's own scrolling path sets sizes the same way, without the
    layout; a scrolling widget still updates its scrollbars (one that appears asks for its layout).
    Not a `Widget` subclass: Textual takes a widget's CSS type names from its first widget base only.
    """

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)  # type: ignore[misc]
