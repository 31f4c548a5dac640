"""A command's output shown as a terminal would colour it, with nothing it wrote acting on the screen.

Commands forced to colour (`ls --color=always`, `pytest --color=yes`, `git -c color.ui=always`) write
SGR sequences (`ESC [31m`): those are rendered as the theme's colours and styles. Every other
sequence (cursor moves, screen clears, window titles) is dropped, and the control characters left
are shown escaped by `printable`, so the output never moves the cursor or clears the screen. The
stored text stays as the command wrote it.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content

from harnez.text import COLOUR_CODES, TERMINAL_CODES, printable, terminal_lines


def terminal_content(output: str, *, last_lines: int | None = None) -> Content:
    """The output (or its last `last_lines` lines) as a terminal leaves it: lines rewritten after a
    carriage return at their last state, colours rendered, other terminal codes dropped, the rest of
    the control characters escaped."""
    lines = terminal_lines(output)
    if last_lines is not None and len(lines) > last_lines:
        colours = "".join(COLOUR_CODES.findall("".join(lines[:-last_lines])))  # still in effect
        lines = lines[-last_lines:]
        lines[0] = colours + lines[0]
    return Content.from_rich_text(Text.from_ansi("\n".join(_colours_only(line) for line in lines)))


def _colours_only(line: str) -> str:
    """The line with its colour codes as they are and everything between them made printable."""
    pieces = COLOUR_CODES.split(line)
    codes = COLOUR_CODES.findall(line)
    safe = [printable(TERMINAL_CODES.sub("", piece)) for piece in pieces]
    return "".join(piece + code for piece, code in zip(safe, [*codes, ""], strict=True))
