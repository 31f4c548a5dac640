"""Text hygiene at Harnez's edges: lone surrogates replaced before text is kept, control
characters escaped before text reaches a terminal.

Two kinds of text are unsafe:

- a **lone surrogate** (`\\udcff`): what Python makes of invalid UTF-8 from argv or a file name, or of
  a `\\udcff` escape in a provider's JSON. It is not Unicode: SQLite and UTF-8 output refuse it.
  `valid_text` replaces each with U+FFFD (the replacement character) where text enters Harnez.
- **control characters**: `ESC ]0;…BEL` retitles the terminal, `ESC [2J` clears it, U+202E
  reverses what follows. `printable` shows them as escapes (`\\x1b`) in everything Harnez prints;
  `json_line` keeps JSON Lines output free of the ones JSON itself leaves raw.

A command's output is text written for a terminal: `terminal_lines` gives the lines a terminal would
leave of it (a progress bar at its last state) and `plain_output` drops its escape sequences too; the
TUI renders its colours (`harnez/tui/widgets/terminal.py`).
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"

_SURROGATE = re.compile("[\ud800-\udfff]")
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Bidirectional formatting characters: they reorder the text that follows on screen."""
_UNSAFE_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
"""What `printable` escapes in multi-line text: controls but tab and newline, bidi, surrogates."""
_UNSAFE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
"""What `printable` escapes in one-line text (titles, paths): tab and newline too."""
_UNSAFE_IN_JSON = re.compile(f"[\x7f-\x9f\u2028\u2029{_BIDI}\ud800-\udfff]")
"""What `json.dumps(ensure_ascii=False)` leaves raw but a terminal may act on (it escapes C0), and the
line and paragraph separators, which line readers such as Python's `str.splitlines` break lines at."""
TERMINAL_CODES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
"""The escape sequences a command writes for a terminal: colours and styles, cursor moves, screen
clears, window titles."""
COLOUR_CODES = re.compile(r"\x1b\[[0-9;]*m")
"""Of those, the colour and style sequences (SGR): the only ones worth keeping from a command's output."""
TERMINAL_TOOLS = frozenset({"shell"})
"""Tools whose result is what a command printed for a terminal."""
_SHORT_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def valid_text(value: Any) -> Any:
    """`value` with every lone surrogate replaced by U+FFFD, in a string or inside JSON-like data."""
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {valid_text(key): valid_text(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(valid_text(item) for item in value)
    return value


def printable(text: str, *, one_line: bool = False) -> str:
    """Text safe to write to a terminal: control, bidi and surrogate characters shown as escapes.

    Tabs and newlines stay (CRLF becomes a newline) unless `one_line`, where they are escaped
    too, so a title or a path can never break the line it is printed on.
    """
    if not one_line and "\r\n" in text:
        text = text.replace("\r\n", "\n")
    unsafe = _UNSAFE_LINE if one_line else _UNSAFE_LINES
    return unsafe.sub(_escape, text) if unsafe.search(text) else text


def sentence(text: str) -> str:
    """`text` ending as a sentence: a full stop added unless it already ends with `.`, `?`, `!` or `…`.

    For joining a reason someone else wrote ("not now", "…is the base_url right?") into a message.
    """
    text = text.rstrip()
    return text if not text or text[-1] in ".?!…" else text + "."


def printable_data(value: Any) -> Any:
    """`printable` applied to every string inside JSON-like data (an event's payload, for display)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {key: printable_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(printable_data(item) for item in value)
    return value


def is_terminal_output(tool: str, content: Any) -> bool:
    """Whether a tool's result is what a command printed for a terminal (`TERMINAL_TOOLS`), shown as
    a `!` line's output is rather than as plain text."""
    return tool in TERMINAL_TOOLS and isinstance(content, str)


def terminal_lines(output: str) -> list[str]:
    """A command's output in the lines a terminal leaves on screen: CRLF ends a line, and a line
    rewritten after carriage returns (a progress bar) is its last state. Escape sequences stay; those
    of the rewritten parts are kept in front (a colour set there still applies)."""
    lines = output.replace("\r\n", "\n").split("\n")
    return [_last_state(line) if "\r" in line else line for line in lines]


def plain_output(output: str) -> str:
    """A command's output as plain text: its lines as a terminal leaves them, every escape sequence
    dropped (control characters are left to `printable`)."""
    return "\n".join(TERMINAL_CODES.sub("", line) for line in terminal_lines(output))


def _last_state(line: str) -> str:
    """A line written over after carriage returns: its last part with text (a progress bar at 100 %,
    not the empty rest after a final `\r`), the colour codes of the parts before it in front."""
    parts = line.split("\r")
    last = max((at for at, part in enumerate(parts) if part), default=0)
    return "".join(COLOUR_CODES.findall("".join(parts[:last]))) + parts[last]


def json_line(value: Any) -> str:
    """One line of compact JSON, non-ASCII text kept readable and nothing a terminal acts on left raw."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # The characters escaped here only ever occur inside JSON strings, where `\\uXXXX` means the same.
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
