"""A line of key hints that wraps between hints, never inside one: a narrow terminal shows them all."""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.widgets import Static

SEPARATOR = " · "

QUIT_WINDOW = 2.0
"""Seconds a first Ctrl+C arms quitting for (as long as its notice shows), in the prompt and the
picker: a Ctrl+C pressed later arms it again instead of quitting."""

CTRL_C_QUITS = Binding("ctrl+c", "app.help_quit", "Quit", show=False)
"""Ctrl+C on a modal screen (an approval prompt, a dialog): a modal screen's keys never reach the
app's bindings, and Textual's Screen binds Ctrl+C to copy, so without it Ctrl+C did nothing at all
there (no notice, no quit), where everywhere else a second press quits."""
CTRL_C_QUITS_OVER_INPUT = Binding("ctrl+c", "app.help_quit", "Quit", show=False, priority=True)
"""The same on a modal screen whose input has the focus (the rename dialog, the model picker): the
input's own Ctrl+C (copy) took the key first, so nothing was said and nothing quit. No input of the
app copies with Ctrl+C: the prompt clears with it, the picker's search too."""


def hints_content(hints: Sequence[tuple[str, str]], width: int | None = None) -> Content:
    """`Enter open · Esc close`, each key bold; lines broken between hints to fit `width` cells (a hint
    wider than the whole line gets a line of its own)."""
    lines: list[list[Content]] = [[]]
    used = 0
    for key, what in hints:
        hint = Content.assemble((key, "bold"), " ", what)
        needed = hint.cell_length + (len(SEPARATOR) if lines[-1] else 0)
        if width is not None and lines[-1] and used + needed > width:
            lines.append([])
            used, needed = 0, hint.cell_length
        lines[-1].append(hint)
        used += needed
    return Content("\n").join(Content(SEPARATOR).join(line) for line in lines)


class KeyHints(Static):
    """The keys of a screen, at its foot; as tall as the hints need at the terminal's width."""

    DEFAULT_CSS = """
    KeyHints {
        dock: bottom;
        width: 1fr;
        height: auto;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """

    def __init__(self, hints: Sequence[tuple[str, str]], *, id: str | None = None) -> None:
        super().__init__(hints_content(hints), id=id)
        self.hints = tuple(hints)
        """(key, what it does) pairs, in the order shown."""

    def on_resize(self, _: events.Resize) -> None:
        self.update(hints_content(self.hints, self.content_size.width))
